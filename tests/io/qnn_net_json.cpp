// Pins down io/qnn_net_json.hpp: the tensors of a QNN converter model JSON
// (dims, Qnn_DataType_t code or name, NHWC/NDHWC axis formats, scale_offset
// with zero point = -offset), and hostile files refused with an error naming
// the file, line:column and tensor: wrong member types, unsupported codes,
// over-long and absurd dims, deep nesting.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <numgap/io/qnn_net_json.hpp>

#include "temp_directory.hpp"

using numgap::io::read_qnn_net_json;
using numgap_test::contains;
using numgap_test::error_of;

namespace {
std::string with_tensor(const std::string& entry) { return R"({"graph": {"tensors": {"t": )" + entry + "}}}"; }
} // namespace

TEST_SUITE("io") {
TEST_CASE("qnn net.json: dims, data types, axis formats and scale_offset") {
    const auto described = read_qnn_net_json(R"({"model.cpp": "m.cpp", "graph": {"nodes": {}, "tensors": {
        "nhwc": {"id": 1, "dims": [1, 4, 4, 8], "data_type": 562, "axis_format": "NHWC", "src_axis_format": "NCHW"},
        "ndhwc": {"dims": [1, 2, 4, 4, 8], "data_type": 534, "axis_format": "NDHWC"},
        "q": {"dims": [2, 3], "data_type": "QNN_DATATYPE_SFIXED_POINT_8", "axis_format": "NC",
              "quant_params": {"definition": 1, "encoding": 0, "scale_offset": {"scale": 0.25, "offset": 3}}},
        "unquantized": {"dims": [5], "data_type": 1032, "quant_params": {"scale_offset": {"scale": 0.0, "offset": 0}}},
        "integer": {"dims": [], "data_type": 50, "quant_params": {"scale_offset": {"scale": 2.0, "offset": 1}}}}}})",
                                             "net.json");
    REQUIRE(described.size() == 5);
    const auto& nhwc = described.at("nhwc");
    CHECK(nhwc.type == numgap::dtype::float32);
    CHECK(nhwc.dims == std::vector<std::int64_t>{1, 4, 4, 8});
    CHECK(nhwc.axis_order == std::vector<int>{0, 2, 3, 1});
    CHECK(!nhwc.fixed_point);
    CHECK(described.at("ndhwc").type == numgap::dtype::float16);
    CHECK(described.at("ndhwc").axis_order == std::vector<int>{0, 2, 3, 4, 1});
    const auto& q = described.at("q");
    CHECK(q.type == numgap::dtype::int8);
    CHECK(q.fixed_point);
    CHECK(!q.axis_order);
    CHECK(q.scale == 0.25f);
    CHECK(q.zero_point == -3);
    CHECK(described.at("unquantized").type == numgap::dtype::uint8);
    CHECK(!described.at("unquantized").scale);
    CHECK(described.at("integer").type == numgap::dtype::int32);
    CHECK(!described.at("integer").scale); // quant_params of a plain integer type are not read
}

TEST_CASE("qnn net.json: hostile files are errors naming the file, line:column and tensor") {
    const auto refused = [](const std::string& text) { return error_of([&] { (void)read_qnn_net_json(text, "m_net.json"); }); };
    CHECK(contains(refused("[]"), "'m_net.json' line 1:1: a QNN model JSON must be an object"));
    CHECK(contains(refused(R"({"graph": 3})"), "needs a \"graph\" object"));
    CHECK(contains(refused(R"({"graph": {"tensors": []}})"), "\"graph\" needs a \"tensors\" object"));
    CHECK(contains(refused(with_tensor("7")), "tensor 't': a tensor entry must be an object"));
    CHECK(contains(refused(with_tensor(R"({"dims": "1x4", "data_type": 562})")), "tensor 't': \"dims\" must be an array"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1, -4], "data_type": 562})")), "non-negative integers"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1.5], "data_type": 562})")), "non-negative integers"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1,1,1,1,1,1,1,1,1], "data_type": 562})")), "more than numgap's maximum rank 8"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1099511627776, 1099511627776], "data_type": 562})")),
                   "overflows 64 bits"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1], "data_type": 100})")), "unsupported \"data_type\" 100"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1], "data_type": "QNN_DATATYPE_FLOAT_64"})")),
                   "unsupported \"data_type\" QNN_DATATYPE_FLOAT_64"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1], "data_type": [562]})")), "must be a Qnn_DataType_t code"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1]})")), "needs \"dims\" and \"data_type\""));
    CHECK(contains(refused(with_tensor(R"({"dims": [1], "data_type": 562, "axis_format": 4})")), "\"axis_format\" must be a string"));
    CHECK(contains(refused(with_tensor(R"({"dims": [1], "data_type": 1032, "quant_params": {"scale_offset": {"scale": "x", "offset": 0}}})")),
                   "needs a numeric \"scale\""));
    CHECK(contains(refused(with_tensor(R"({"dims": [1], "data_type": 1032, "quant_params": {"scale_offset": {"scale": 1, "offset": 4294967296}}})")),
                   "integer \"offset\" within 32 bits"));
    const std::string line = refused("{\"graph\": {\"tensors\": {\n  \"t\": {\"dims\": {}, \"data_type\": 562}}}}");
    CHECK(contains(line, "line 2:17, tensor 't'"));
    CHECK(contains(refused(std::string(1000, '[') + std::string(1000, ']')), "m_net.json"));
    CHECK(contains(refused(R"({"graph": {"tensors": {"t": )"), "m_net.json"));
}
}
