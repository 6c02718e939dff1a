// Pins down report_rows against the group_reports it was given: every field
// of thousands of random rows (empty and long texts, a tensor key equal to
// its node's name, shared and distinct messages, metrics with and without
// rules, -0.0, NaN and infinite values and thresholds, rare fields) comes
// back exactly, through operator[], copy_to into a reused row, iteration
// and the in-place reads; set() replaces a row without touching the others;
// pop_back and clear; set_analysis.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/report/report_rows.hpp>

namespace report_rows_test {
using numgap::group_report;
using numgap::report_rows;

// Doubles compared bit for bit: NaN equals NaN, -0.0 differs from 0.0.
bool same_double(double a, double b) { return std::signbit(a) == std::signbit(b) && (a == b || (a != a && b != b)); }

bool same_rule(const std::optional<numgap::pass_rule>& a, const std::optional<numgap::pass_rule>& b) {
    return a.has_value() == b.has_value() && (!a || (a->op == b->op && same_double(a->value, b->value)));
}

void check_same(const group_report& got, const group_report& want) {
    CHECK(got.reference_nodes == want.reference_nodes);
    CHECK(got.target_nodes == want.target_nodes);
    CHECK(got.reference_tensor == want.reference_tensor);
    CHECK(got.target_tensor == want.target_tensor);
    CHECK(got.kind == want.kind);
    CHECK(got.strategy == want.strategy);
    CHECK(got.confidence.has_value() == want.confidence.has_value());
    if (got.confidence && want.confidence) CHECK(same_double(*got.confidence, *want.confidence));
    CHECK(got.ambiguous_with == want.ambiguous_with);
    CHECK(got.repair == want.repair);
    CHECK(got.fails_every_candidate == want.fails_every_candidate);
    CHECK(got.op == want.op);
    CHECK(got.shape == want.shape);
    CHECK(got.dtype_reference == want.dtype_reference);
    CHECK(got.dtype_target == want.dtype_target);
    CHECK(got.quantization_reference == want.quantization_reference);
    CHECK(got.quantization_target == want.quantization_target);
    CHECK(got.count == want.count);
    REQUIRE(got.metrics.size() == want.metrics.size());
    for (std::size_t m = 0; m < got.metrics.size(); ++m) {
        CHECK(got.metrics[m].name == want.metrics[m].name);
        CHECK(same_double(got.metrics[m].value, want.metrics[m].value));
        CHECK(same_rule(got.metrics[m].rule, want.metrics[m].rule));
        CHECK(got.metrics[m].passed == want.metrics[m].passed);
    }
    CHECK(got.status == want.status);
    CHECK(got.message == want.message);
    REQUIRE(got.error_detail.has_value() == want.error_detail.has_value());
    if (want.error_detail) {
        CHECK(got.error_detail->kind == want.error_detail->kind);
        CHECK(got.error_detail->where.file == want.error_detail->where.file);
        CHECK(got.error_detail->where.item == want.error_detail->where.item);
        CHECK(got.error_detail->where.offset == want.error_detail->where.offset);
        CHECK(got.error_detail->where.line == want.error_detail->where.line);
        CHECK(got.error_detail->where.column == want.error_detail->where.column);
    }
    CHECK(got.order == want.order);
    CHECK(got.error_origin == want.error_origin);
    CHECK(got.suspect == want.suspect);
}

// The in-place reads of row i agree with the row.
void check_reads(const report_rows& rows, std::size_t i, const group_report& want) {
    CHECK(rows.status(i) == want.status);
    CHECK(rows.compared(i) == want.compared());
    const auto same_texts = [](report_rows::text_list texts, const std::vector<std::string>& strings) {
        if (texts.size() != strings.size()) return false;
        for (std::size_t t = 0; t < strings.size(); ++t)
            if (texts[t] != strings[t]) return false;
        return true;
    };
    CHECK(same_texts(rows.reference_nodes(i), want.reference_nodes));
    CHECK(same_texts(rows.target_nodes(i), want.target_nodes));
    CHECK(same_texts(rows.ambiguous_with(i), want.ambiguous_with));
    CHECK(rows.ambiguous(i) == want.ambiguous());
    CHECK(rows.reference_tensor(i) == want.reference_tensor);
    CHECK(rows.target_tensor(i) == want.target_tensor);
    CHECK(rows.strategy(i) == want.strategy);
    CHECK(rows.op(i) == want.op);
    CHECK(rows.message(i) == want.message);
    CHECK(rows.order(i) == want.order);
    CHECK(rows.error_origin(i) == want.error_origin);
    CHECK(rows.suspect(i) == want.suspect);
    CHECK(rows.repair(i) == want.repair);
    CHECK(rows.fails_every_candidate(i) == want.fails_every_candidate);
    REQUIRE(rows.metrics(i).size() == want.metrics.size());
    for (const numgap::report_metric& metric : want.metrics) {
        const report_rows::metric_cell* cell = rows.find_metric(i, metric.name);
        REQUIRE(cell != nullptr);
        // find_metric returns the first of a name, as group_report::find_metric does.
        const numgap::report_metric* first = want.find_metric(metric.name);
        CHECK(same_double(cell->value, first->value));
        CHECK(same_rule(rows.metric_rule(*cell), first->rule));
    }
    CHECK(rows.find_metric(i, "no such metric") == nullptr);
}

struct row_maker {
    std::mt19937 random{2026};

    std::size_t below(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random); }
    std::string text() {
        switch (below(5)) {
        case 0: return std::string();
        case 1: return "n" + std::to_string(below(100));
        case 2: return std::string(1 + below(300), char('a' + below(26))); // past any small-string buffer
        case 3: return std::string("\0\xff\"\n", 4) + std::to_string(below(10));
        default: return "layers." + std::to_string(below(40)) + ".mlp.down_proj";
        }
    }
    std::vector<std::string> texts(std::size_t most) {
        std::vector<std::string> list(below(most + 1));
        for (std::string& t : list) t = text();
        return list;
    }
    double value() {
        const double special[] = {0.0,
                                  -0.0,
                                  std::numeric_limits<double>::quiet_NaN(),
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::denorm_min(),
                                  0.99,
                                  1e-3};
        return below(3) == 0 ? special[below(8)] : std::uniform_real_distribution<double>(-5, 5)(random);
    }

    group_report row() {
        group_report row;
        row.reference_nodes = texts(3);
        row.target_nodes = texts(3);
        row.reference_tensor = below(2) && !row.reference_nodes.empty() ? row.reference_nodes.back() : text();
        row.target_tensor = below(2) && !row.target_nodes.empty() ? row.target_nodes.back() : text();
        if (below(4)) row.kind = numgap::match_kind(below(4));
        row.strategy = below(2) ? "name" : text();
        if (below(4)) row.confidence = value();
        else row.confidence.reset();
        row.ambiguous_with = below(3) ? std::vector<std::string>() : texts(4);
        row.repair = numgap::repair_state(below(4));
        row.fails_every_candidate = below(5) == 0;
        row.op = below(2) ? "conv" : text();
        row.shape.resize(below(6));
        for (std::int64_t& extent : row.shape) extent = std::int64_t(below(1000)) - (below(10) == 0 ? 5 : 0);
        if (below(4)) row.dtype_reference = numgap::dtype(below(5));
        if (below(4)) row.dtype_target = numgap::dtype(below(5));
        if (below(6) == 0) row.quantization_reference = "scale " + std::to_string(below(100));
        if (below(6) == 0) row.quantization_target = text();
        row.count = std::int64_t(below(1u << 20)) * (below(8) == 0 ? -1 : 1);
        const char* names[] = {"cosine", "atol", "mse", "snr"};
        row.metrics.resize(below(5));
        for (numgap::report_metric& metric : row.metrics) {
            metric.name = below(8) ? names[below(4)] : text(); // repeated names too
            metric.value = value();
            if (below(3)) metric.rule = numgap::pass_rule{numgap::comparison(below(5)), value()};
            metric.passed = below(2) != 0;
        }
        row.status = numgap::group_status(below(5));
        const char* messages[] = {"no target node matches this reference node", "missing"};
        row.message = below(2) ? std::string() : below(2) ? std::string(messages[below(2)]) : text();
        if (below(8) == 0)
            row.error_detail = numgap::group_error{
                numgap::error_kind(below(3)),
                numgap::error_location{text(), text(), below(2) ? 41u : numgap::error_location::no_offset,
                                       std::uint32_t(below(9)), std::uint32_t(below(9))}};
        row.order = below(4) ? below(1000) : std::numeric_limits<std::size_t>::max();
        row.error_origin = below(3) == 0;
        row.suspect = below(3) == 0;
        return row;
    }
};
} // namespace report_rows_test

TEST_SUITE("report") {
TEST_CASE("report_rows: thousands of random rows come back exactly, however they are read") {
    using namespace report_rows_test;
    row_maker make;
    std::vector<group_report> want;
    report_rows rows;
    for (std::size_t i = 0; i < 3000; ++i) {
        want.push_back(make.row());
        rows.push_back(want.back());
    }
    REQUIRE(rows.size() == want.size());
    group_report reused = make.row(); // copy_to must overwrite every field of a used row
    for (std::size_t i = 0; i < want.size(); ++i) {
        CAPTURE(i);
        check_same(rows[i], want[i]);
        rows.copy_to(i, reused);
        check_same(reused, want[i]);
        check_reads(rows, i, want[i]);
    }
    std::size_t i = 0;
    for (const group_report& row : rows) check_same(row, want[i++]);
    CHECK(i == want.size());
    check_same(rows.front(), want.front());
    check_same(rows.back(), want.back());

    // set() replaces one row; every other row is unchanged.
    for (std::size_t round = 0; round < 2000; ++round) {
        const std::size_t at = make.below(want.size());
        want[at] = make.row();
        rows.set(at, want[at]);
    }
    for (std::size_t r = 0; r < want.size(); ++r) {
        CAPTURE(r);
        check_same(rows[r], want[r]);
    }

    // set_analysis changes order, error_origin and suspect only.
    rows.set_analysis(7, 12345, true, false);
    want[7].order = 12345;
    want[7].error_origin = true;
    want[7].suspect = false;
    check_same(rows[7], want[7]);

    rows.pop_back();
    want.pop_back();
    CHECK(rows.size() == want.size());
    check_same(rows.back(), want.back());
    rows.push_back(want.front());
    check_same(rows.back(), want.front());

    rows.clear();
    CHECK(rows.empty());
    CHECK(rows.begin() == rows.end());
}

TEST_CASE("report_rows: a row copied out is a copy") {
    report_rows_test::row_maker make;
    numgap::report_rows rows;
    const numgap::group_report first = make.row();
    rows.push_back(first);
    numgap::group_report copy = rows[0];
    copy.message = "changed";
    copy.reference_nodes.push_back("changed");
    report_rows_test::check_same(rows[0], first);

    rows.push_back(first);
    report_rows_test::check_same(rows[1], first);
}

TEST_CASE("report_rows: a moved-from table can be used again") {
    numgap::group_report row;
    row.reference_nodes = {"a"};
    row.message = std::string(40, 'm'); // rows share a message: the table remembers the last one
    numgap::report_rows rows;
    rows.push_back(row);
    rows.push_back(row);
    numgap::report_rows moved = std::move(rows);
    rows.push_back(row); // NOLINT(bugprone-use-after-move): a moved-from table is valid
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].message == row.message);
    CHECK(moved.size() == 2);
    CHECK(moved[1].message == row.message);
}
} // TEST_SUITE("report")
