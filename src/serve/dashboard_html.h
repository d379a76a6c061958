// SPDX-License-Identifier: Apache-2.0
// The dashboard page (web/dashboard.html), embedded at build time: one
// self-contained file, no network, that polls the live JSON.

#ifndef STRAG_SRC_SERVE_DASHBOARD_HTML_H_
#define STRAG_SRC_SERVE_DASHBOARD_HTML_H_

#include <string_view>

namespace strag::serve {

std::string_view DashboardHtml();

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_DASHBOARD_HTML_H_
