// SPDX-License-Identifier: Apache-2.0
#include "report/hosts.h"

#include <gtest/gtest.h>

namespace strag::report {
namespace {

TEST(HostsTest, HostFromTensorboardFileNames) {
  EXPECT_EQ(HostFromTraceFileName("run/gpu-a12_4711.1733134000123.pt.trace.json"),
            "gpu-a12");
  EXPECT_EQ(HostFromTraceFileName("node_7_4711.1733.pt.trace.json.gz"),
            "node_7");  // underscores in the host name stay
  EXPECT_EQ(HostFromTraceFileName(
                "node0.cluster.local_4000.1733134000.pt.trace.json"),
            "node0.cluster.local");  // so do dots
  // Only tensorboard's whole shape: not a rank's name, not another file.
  EXPECT_EQ(HostFromTraceFileName("/a.b/host_12.json"), std::nullopt);
  EXPECT_EQ(HostFromTraceFileName("rank_0.json"), std::nullopt);
  EXPECT_EQ(HostFromTraceFileName("trace_8_rank_1.json"), std::nullopt);
  EXPECT_EQ(HostFromTraceFileName("rank_0.pt.trace.json"), std::nullopt);
  EXPECT_EQ(HostFromTraceFileName("a\x1b[31m_1.2.pt.trace.json"), std::nullopt);
  EXPECT_EQ(HostFromTraceFileName("rank-3.json"), std::nullopt);
  EXPECT_EQ(HostFromTraceFileName("trace_rank_x.json"), std::nullopt);
  EXPECT_EQ(HostFromTraceFileName("_4711.pt.trace.json"), std::nullopt);
  EXPECT_EQ(HostFromTraceFileName("noext_12"), std::nullopt);
}

TEST(HostsTest, ParsesAHostsFile) {
  const Result<HostMap> hosts = ParseHostsFile(
      "# rank host\n0 gpu-a\n1\tgpu-a\n\n2,gpu-b  # spare\r\n 3 gpu-b", "h.txt");
  ASSERT_TRUE(hosts.ok()) << hosts.status().message();
  EXPECT_EQ(*hosts, (HostMap{{0, "gpu-a"}, {1, "gpu-a"}, {2, "gpu-b"},
                             {3, "gpu-b"}}));
  EXPECT_EQ(ParseHostsFile("0 a\nx b\n", "h.txt").status().message(),
            "h.txt: line 2: expected `RANK HOST`, found \"x b\"");
  EXPECT_EQ(ParseHostsFile("0 a\n1\n", "h.txt").status().message(),
            "h.txt: line 2: expected one host name after rank 1");
  EXPECT_EQ(ParseHostsFile("0 a b\n", "h.txt").status().message(),
            "h.txt: line 1: expected one host name after rank 0");
  EXPECT_EQ(ParseHostsFile("0 a\n0 b\n", "h.txt").status().message(),
            "h.txt: line 2: rank 0 is given twice");
  EXPECT_EQ(ParseHostsFile("-1 a\n", "h.txt").status().message(),
            "h.txt: line 1: expected `RANK HOST`, found \"-1 a\"");
  EXPECT_EQ(ParseHostsFile("0 gpu\x1b[31m\n", "h.txt").status().message(),
            "h.txt: line 1: a control character in the host name of rank 0 "
            "(lines end with LF or CRLF)");
  EXPECT_TRUE(ParseHostsFile("\xEF\xBB\xBF" "0 a\n", "h.txt").ok());
}

TEST(HostsTest, NodesNumberedByLowestRank) {
  trace::Topology t;
  for (int32_t r : {0, 1, 2, 3}) t.places.push_back({.rank = r, .node = 0});
  const HostMap hosts{{0, "z"}, {1, "a"}, {2, "z"}, {3, "a"}, {9, "q"}};
  ASSERT_TRUE(ApplyHosts(hosts, "--hosts h.txt", &t).ok());
  EXPECT_EQ(t.hosts, (std::vector<std::string>{"z", "a"}));
  EXPECT_EQ(t.places[0].node, 0);
  EXPECT_EQ(t.places[1].node, 1);
  EXPECT_EQ(t.places[2].node, 0);
  EXPECT_EQ(t.HostOf(1), "a");
  EXPECT_EQ(t.HostOf(2), "");
  EXPECT_EQ(t.hosts_source, "--hosts h.txt");
  trace::Topology missing;
  missing.places.push_back({.rank = 5});
  EXPECT_EQ(ApplyHosts(hosts, "--hosts h.txt", &missing).message(),
            "--hosts h.txt: no host for rank 5 (traced)");
  EXPECT_TRUE(missing.hosts.empty());
}

}  // namespace
}  // namespace strag::report
