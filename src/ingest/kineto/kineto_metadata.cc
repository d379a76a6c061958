// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/kineto_metadata.h"

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <limits>

namespace strag::ingest::kineto {
namespace {

namespace dom = simdjson::dom;
using simdjson::SUCCESS;

// An integer, also from an integral double or a string of digits.
bool GetInteger(dom::element value, int64_t* out) {
  if (value.get_int64().get(*out) == SUCCESS) return true;
  uint64_t u = 0;
  if (value.get_uint64().get(u) == SUCCESS) {
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return false;
    }
    *out = static_cast<int64_t>(u);
    return true;
  }
  double d = 0;
  if (value.get_double().get(d) == SUCCESS) {
    if (!(std::fabs(d) < 9.2e18)) return false;
    *out = static_cast<int64_t>(d);
    return static_cast<double>(*out) == d;
  }
  std::string_view text;
  if (value.get_string().get(text) != SUCCESS) return false;
  const auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool GetInt32(dom::element value, int32_t* out) {
  int64_t v = 0;
  if (!GetInteger(value, &v) || v < std::numeric_limits<int32_t>::min() ||
      v > std::numeric_limits<int32_t>::max()) {
    return false;
  }
  *out = static_cast<int32_t>(v);
  return true;
}

// pg_name is a string in Kineto, a number in some writers.
bool GetName(dom::element value, std::string* out) {
  std::string_view text;
  if (value.get_string().get(text) == SUCCESS) {
    *out = std::string(text);
    return true;
  }
  int64_t number = 0;
  if (!GetInteger(value, &number)) return false;
  *out = std::to_string(number);
  return true;
}

void ReadPgConfig(dom::element value, KinetoMetadata* meta,
                  std::vector<std::string>* warnings,
                  const std::string& where) {
  dom::array groups;
  if (value.get_array().get(groups) != SUCCESS) {
    warnings->push_back(where +
                        "distributedInfo.pg_config is not a list; "
                        "ignored");
    return;
  }
  for (dom::element group : groups) {
    dom::object object;
    dom::element name;
    trace::ProcessGroupInfo info;
    if (group.get_object().get(object) != SUCCESS ||
        object["pg_name"].get(name) != SUCCESS || !GetName(name, &info.name)) {
      warnings->push_back(where + "a pg_config entry has no pg_name; ignored");
      continue;
    }
    std::string_view desc;
    if (object["pg_desc"].get_string().get(desc) == SUCCESS) {
      info.desc = std::string(desc);
    }
    dom::array ranks;
    if (object["ranks"].get_array().get(ranks) == SUCCESS) {
      for (dom::element rank : ranks) {
        int32_t r = 0;
        if (!GetInt32(rank, &r)) {
          info.ranks.clear();
          break;
        }
        info.ranks.push_back(r);
      }
    }
    meta->pg_config.push_back(std::move(info));
  }
}

void ReadDistributedInfo(dom::element value, KinetoMetadata* meta,
                         std::vector<std::string>* warnings,
                         const std::string& where) {
  dom::object info;
  if (value.get_object().get(info) != SUCCESS) {
    warnings->push_back(where + "distributedInfo is not an object; ignored");
    return;
  }
  for (const dom::key_value_pair field : info) {
    if (field.key == "rank") {
      meta->has_rank = GetInt32(field.value, &meta->rank);
      if (!meta->has_rank) {
        warnings->push_back(where + "distributedInfo.rank is not an integer");
      }
    } else if (field.key == "world_size") {
      meta->has_world_size = GetInt32(field.value, &meta->world_size);
    } else if (field.key == "backend") {
      std::string_view backend;
      if (field.value.get_string().get(backend) == SUCCESS) {
        meta->backend = std::string(backend);
      }
    } else if (field.key == "pg_config") {
      ReadPgConfig(field.value, meta, warnings, where);
    }
  }
}

}  // namespace

std::vector<std::string> KinetoMetadataKeys() {
  return {"distributedInfo", "baseTimeNanoseconds", "displayTimeUnit"};
}

Status ParseTopLevelValue(std::string_view source, std::string_view key,
                          std::string_view json, uint64_t offset,
                          KinetoMetadata* meta,
                          std::vector<std::string>* warnings) {
  dom::parser parser;
  const simdjson::padded_string padded(json);
  dom::element value;
  if (const auto e = parser.parse(padded).get(value); e != SUCCESS) {
    return InvalidInput(std::string(source) + ": byte " +
                        std::to_string(offset) + ": invalid JSON in " +
                        std::string(key) + ": " + simdjson::error_message(e));
  }
  const std::string where = std::string(source) + ": ";
  if (key == "distributedInfo") {
    ReadDistributedInfo(value, meta, warnings, where);
  } else if (key == "baseTimeNanoseconds") {
    meta->has_base_time = GetInteger(value, &meta->base_time_ns);
    if (!meta->has_base_time) {
      warnings->push_back(where +
                          "baseTimeNanoseconds is not an integer; "
                          "ignored");
    }
  } else if (key == "displayTimeUnit") {
    std::string_view unit;
    if (value.get_string().get(unit) == SUCCESS) {
      meta->display_time_unit = std::string(unit);
    }
  }
  return Status::Ok();
}

}  // namespace strag::ingest::kineto
