// Pins pass-rule parsing, printing and the NaN policy (metric/rule.hpp, metric_result.hpp).
#include <cmath>
#include <limits>

#include <doctest/doctest.h>

#include <numgap/metric/metric_result.hpp>
#include <numgap/metric/rule.hpp>

using numgap::comparison;
using numgap::pass_rule;

TEST_SUITE("metric") {
TEST_CASE("parse_pass_rule accepts every operator with or without spaces") {
    CHECK(numgap::parse_pass_rule(">=0.99") == pass_rule{comparison::ge, 0.99});
    CHECK(numgap::parse_pass_rule("< 0.1") == pass_rule{comparison::lt, 0.1});
    CHECK(numgap::parse_pass_rule("== 0") == pass_rule{comparison::eq, 0});
    CHECK(numgap::parse_pass_rule("<=1e-3") == pass_rule{comparison::le, 1e-3});
    CHECK(numgap::parse_pass_rule("  >  -5 ") == pass_rule{comparison::gt, -5});
    CHECK(numgap::parse_pass_rule(">= +20") == pass_rule{comparison::ge, 20});
    CHECK(numgap::parse_pass_rule("< inf") == pass_rule{comparison::lt, std::numeric_limits<double>::infinity()});
}

TEST_CASE("parse_pass_rule rejects malformed text") {
    for (const char* text : {"", ">=", "0.99", "=> 1", "= 1", ">= 1x", ">= nan", ">= 1 2", "~ 3", ">=0.9.9"}) {
        CAPTURE(text);
        CHECK_FALSE(numgap::parse_pass_rule(text).has_value());
    }
}

TEST_CASE("to_string prints the shortest round-tripping form") {
    CHECK(numgap::to_string(pass_rule{comparison::ge, 0.99}) == ">= 0.99");
    CHECK(numgap::to_string(pass_rule{comparison::lt, 1e-7}) == "< 1e-07");
    CHECK(numgap::to_string(pass_rule{comparison::eq, 0}) == "== 0");
    for (const pass_rule rule : {pass_rule{comparison::le, 0.1}, pass_rule{comparison::gt, 123.456}})
        CHECK(numgap::parse_pass_rule(numgap::to_string(rule)) == rule);
}

TEST_CASE("accepts() compares as named and never accepts NaN") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    CHECK(pass_rule{comparison::ge, 1}.accepts(1));
    CHECK_FALSE(pass_rule{comparison::gt, 1}.accepts(1));
    CHECK(pass_rule{comparison::le, 1}.accepts(1));
    CHECK_FALSE(pass_rule{comparison::lt, 1}.accepts(1));
    CHECK(pass_rule{comparison::eq, 0}.accepts(0));
    CHECK_FALSE(pass_rule{comparison::eq, 0}.accepts(1e-300));
    for (const comparison op : {comparison::ge, comparison::gt, comparison::le, comparison::lt, comparison::eq})
        CHECK_FALSE(pass_rule{op, 0}.accepts(nan));
}

TEST_CASE("metric_result without a rule passes unless the value is NaN") {
    CHECK(numgap::make_metric_result("x", 5.0, std::nullopt).passed);
    CHECK(numgap::make_metric_result("x", std::numeric_limits<double>::infinity(), std::nullopt).passed);
    CHECK_FALSE(numgap::make_metric_result("x", std::nan(""), std::nullopt).passed);
    CHECK_FALSE(numgap::make_metric_result("x", 0.5, pass_rule{comparison::ge, 0.9}).passed);
}
} // TEST_SUITE("metric")
