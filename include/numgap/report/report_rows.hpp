#pragma once
// numgap::report_rows: a report's rows (comparison_report::groups), kept as
// columns. A group_report of strings and vectors is ~800 bytes with its heap
// blocks; a million-node comparison holds a million rows while its match
// result is still alive, so the rows set the peak memory. Here a row's texts
// live in one character arena (node names, tensor keys, messages), its lists
// in shared pools (core/list_pool.hpp), strategy and op once per distinct
// text, a metric as value, passed bit and a shared (name, rule) entry, and
// the rare fields (quantization, error detail) in a side table: ~200 bytes
// a row of a chain.
//
// What a caller sees is still group_report: push_back(row) stores one,
// operator[](i) copies row i out whole (a const value, so that assigning to
// a field of the copy does not compile instead of silently changing
// nothing), and iteration yields such copies. Readers that visit every row
// of a large report read fields in place instead (status(i),
// reference_nodes(i), metrics(i), ...; views valid until the rows next
// change), and copy_to(i, row) reuses one row's storage across calls.
// set(i, row) replaces a row whole (texts it replaces stay in the arena
// until clear(); on a throw row i may hold parts of both); set_analysis
// writes what analyze_report finds. push_back adds all of a row or nothing.
// Complexity: push_back O(row) amortised; field reads O(1) (find_metric
// O(metrics of the row)); operator[] O(row). Throws: numgap::error
// (error_kind::limit) past 4 GiB of text, 2^32 - 1 list elements of one
// kind, or 2^31 - 1 distinct strategies, ops or metric rules;
// std::bad_alloc.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/interned_texts.hpp>
#include <numgap/core/list_pool.hpp>
#include <numgap/core/text_arena.hpp>
#include <numgap/report/group_report.hpp>

namespace numgap {

class report_rows {
    using text_ref = detail::text_ref;

public:
    using text_list = detail::text_list;
    using value_type = group_report;

    // One metric of a row: its value and verdict, and `spec`, which names
    // its (name, rule) entry (metric_name, metric_rule).
    struct metric_cell {
        double value = 0;
        std::uint32_t spec = 0;
        bool passed = true;
    };

    // Yields each row copied out (a const group_report), in order.
    class iterator {
    public:
        using value_type = group_report;
        using difference_type = std::ptrdiff_t;
        iterator() = default;
        iterator(const report_rows* rows, std::size_t at) : rows_(rows), at_(at) {}
        const group_report operator*() const { return (*rows_)[at_]; }
        iterator& operator++() noexcept {
            ++at_;
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator before = *this;
            ++at_;
            return before;
        }
        bool operator==(const iterator& other) const noexcept { return at_ == other.at_; }

    private:
        const report_rows* rows_ = nullptr;
        std::size_t at_ = 0;
    };

    std::size_t size() const noexcept { return core_.size(); }
    bool empty() const noexcept { return core_.empty(); }
    iterator begin() const noexcept { return {this, 0}; }
    iterator end() const noexcept { return {this, size()}; }

    // Room for `rows` rows of one node a side and `metrics` metrics each.
    void reserve(std::size_t rows, std::size_t metrics = 0) {
        core_.reserve(rows);
        reference_nodes_.reserve(rows, rows);
        target_nodes_.reserve(rows, rows);
        ambiguous_with_.reserve(rows, 0);
        shapes_.reserve(rows, 0);
        metrics_.reserve(rows, rows * metrics);
    }
    void clear() noexcept { *this = report_rows(); }

    void push_back(const group_report& row) {
        const std::size_t index = size();
        const std::size_t chars = texts_.size();
        const std::size_t rare = rare_.size();
        try {
            core_.push_back({});
            reference_nodes_.push_list(no_texts, no_texts);
            target_nodes_.push_list(no_texts, no_texts);
            ambiguous_with_.push_list(no_texts, no_texts);
            shapes_.push_list(no_shape, no_shape);
            metrics_.push_list(no_metrics, no_metrics);
            store(index, row);
        } catch (...) {
            truncate(index);
            texts_.truncate(chars);
            rare_.resize(rare);
            throw;
        }
    }
    void pop_back() noexcept { truncate(size() - 1); }

    // Row i replaced by `row`.
    void set(std::size_t i, const group_report& row) { store(i, row); }

    // Row i copied out whole.
    const group_report operator[](std::size_t i) const {
        group_report row;
        copy_to(i, row);
        return row;
    }
    const group_report front() const { return (*this)[0]; }
    const group_report back() const { return (*this)[size() - 1]; }

    // Row i copied into `out`, reusing its storage.
    void copy_to(std::size_t i, group_report& out) const {
        const row_core& core = core_[i];
        assign_texts(out.reference_nodes, reference_nodes(i));
        assign_texts(out.target_nodes, target_nodes(i));
        out.reference_tensor = texts_[core.reference_tensor];
        out.target_tensor = texts_[core.target_tensor];
        out.kind = kind(i);
        out.strategy = strategy(i);
        out.confidence = confidence(i);
        assign_texts(out.ambiguous_with, ambiguous_with(i));
        out.repair = core.repair;
        out.fails_every_candidate = (core.flags & fails_every_candidate_bit) != 0;
        out.op = op(i);
        out.shape.assign(shape(i).begin(), shape(i).end());
        out.dtype_reference = dtype_of(core.dtype_reference);
        out.dtype_target = dtype_of(core.dtype_target);
        const rare_fields* rare = core.rare == no_rare ? nullptr : &rare_[core.rare];
        out.quantization_reference = rare ? rare->quantization_reference : std::string();
        out.quantization_target = rare ? rare->quantization_target : std::string();
        out.count = core.count;
        const std::span<const metric_cell> cells = metrics(i);
        out.metrics.resize(cells.size());
        for (std::size_t m = 0; m < cells.size(); ++m) {
            out.metrics[m].name = metric_name(cells[m]);
            out.metrics[m].value = cells[m].value;
            out.metrics[m].rule = metric_rule(cells[m]);
            out.metrics[m].passed = cells[m].passed;
        }
        out.status = core.status;
        out.message = texts_[core.message];
        out.error_detail = rare ? rare->error_detail : boxed<group_error>();
        out.order = core.order;
        out.error_origin = (core.flags & error_origin_bit) != 0;
        out.suspect = (core.flags & suspect_bit) != 0;
    }

    // Fields read in place.
    group_status status(std::size_t i) const noexcept { return core_[i].status; }
    bool compared(std::size_t i) const noexcept {
        return status(i) == group_status::pass || status(i) == group_status::fail;
    }
    text_list reference_nodes(std::size_t i) const noexcept { return texts_.list(reference_nodes_.get(i)); }
    text_list target_nodes(std::size_t i) const noexcept { return texts_.list(target_nodes_.get(i)); }
    text_list ambiguous_with(std::size_t i) const noexcept { return texts_.list(ambiguous_with_.get(i)); }
    bool ambiguous(std::size_t i) const noexcept { return !ambiguous_with_.get(i).empty(); }
    std::string_view reference_tensor(std::size_t i) const noexcept { return texts_[core_[i].reference_tensor]; }
    std::string_view target_tensor(std::size_t i) const noexcept { return texts_[core_[i].target_tensor]; }
    std::optional<match_kind> kind(std::size_t i) const noexcept {
        return core_[i].kind == 0 ? std::nullopt : std::optional<match_kind>(match_kind(core_[i].kind - 1));
    }
    std::string_view strategy(std::size_t i) const noexcept { return strategies_[core_[i].strategy]; }
    std::optional<double> confidence(std::size_t i) const noexcept {
        return core_[i].flags & has_confidence_bit ? std::optional<double>(core_[i].confidence) : std::nullopt;
    }
    repair_state repair(std::size_t i) const noexcept { return core_[i].repair; }
    bool fails_every_candidate(std::size_t i) const noexcept {
        return (core_[i].flags & fails_every_candidate_bit) != 0;
    }
    std::string_view op(std::size_t i) const noexcept { return ops_[core_[i].op]; }
    std::span<const std::int64_t> shape(std::size_t i) const noexcept { return shapes_.get(i); }
    std::string_view message(std::size_t i) const noexcept { return texts_[core_[i].message]; }
    std::size_t order(std::size_t i) const noexcept { return core_[i].order; }
    bool error_origin(std::size_t i) const noexcept { return (core_[i].flags & error_origin_bit) != 0; }
    bool suspect(std::size_t i) const noexcept { return (core_[i].flags & suspect_bit) != 0; }

    std::span<const metric_cell> metrics(std::size_t i) const noexcept { return metrics_.get(i); }
    std::string_view metric_name(const metric_cell& cell) const noexcept {
        return specs_[cell.spec].substr(spec_header);
    }
    std::optional<pass_rule> metric_rule(const metric_cell& cell) const noexcept {
        const std::string_view spec = specs_[cell.spec];
        if (spec[0] == 0) return std::nullopt;
        pass_rule rule;
        rule.op = comparison(spec[0] - 1);
        std::memcpy(&rule.value, spec.data() + 1, sizeof rule.value);
        return rule;
    }
    // Row i's metric named `name`, or null (as group_report::find_metric).
    const metric_cell* find_metric(std::size_t i, std::string_view name) const noexcept {
        for (const metric_cell& cell : metrics(i))
            if (metric_name(cell) == name) return &cell;
        return nullptr;
    }

    // What analyze_report finds for row i.
    void set_analysis(std::size_t i, std::size_t order, bool error_origin, bool suspect) noexcept {
        row_core& core = core_[i];
        core.order = order;
        core.flags = std::uint8_t((core.flags & ~(error_origin_bit | suspect_bit)) |
                                  (error_origin ? error_origin_bit : 0) | (suspect ? suspect_bit : 0));
    }

private:
    // The fields of a row that are not lists.
    struct row_core {
        std::int64_t count = 0;
        std::size_t order = 0;
        double confidence = 0;
        text_ref reference_tensor, target_tensor, message;
        std::uint32_t strategy = 0, op = 0; // positions in strategies_, ops_
        std::uint32_t rare = no_rare;       // position in rare_
        group_status status = group_status::pass;
        std::uint8_t kind = 0; // 0: none, else match_kind + 1
        repair_state repair = repair_state::none;
        std::uint8_t dtype_reference = no_dtype, dtype_target = no_dtype;
        std::uint8_t flags = 0;
    };
    // Fields few rows have.
    struct rare_fields {
        std::string quantization_reference, quantization_target;
        boxed<group_error> error_detail;
    };
    static constexpr std::uint32_t no_rare = 0xffffffffu;
    static constexpr std::uint8_t no_dtype = 0xff;
    static constexpr std::uint8_t has_confidence_bit = 1, fails_every_candidate_bit = 2, error_origin_bit = 4,
                                  suspect_bit = 8;
    // A metric spec's text: the rule (comparison + 1, or 0 for none; then
    // the threshold's 8 bytes), then the metric's name.
    static constexpr std::size_t spec_header = 1 + sizeof(double);
    static constexpr const text_ref* no_texts = nullptr;
    static constexpr const std::int64_t* no_shape = nullptr;
    static constexpr const metric_cell* no_metrics = nullptr;

    static std::optional<dtype> dtype_of(std::uint8_t stored) noexcept {
        return stored == no_dtype ? std::nullopt : std::optional<dtype>(dtype(stored));
    }
    static void assign_texts(std::vector<std::string>& out, text_list texts) {
        out.resize(texts.size());
        for (std::size_t t = 0; t < texts.size(); ++t) out[t] = texts[t];
    }

    // Row i's fields from `row`; the row's lists exist (possibly empty).
    void store(std::size_t i, const group_report& row) {
        row_core core;
        store_list(reference_nodes_, i, row.reference_nodes);
        store_list(target_nodes_, i, row.target_nodes);
        store_list(ambiguous_with_, i, row.ambiguous_with);
        shapes_.assign(i, row.shape.begin(), row.shape.end());
        cells_.clear();
        for (const report_metric& metric : row.metrics) {
            std::string& spec = spec_scratch_;
            spec.assign(spec_header, '\0');
            if (metric.rule) {
                spec[0] = char(int(metric.rule->op) + 1);
                std::memcpy(spec.data() + 1, &metric.rule->value, sizeof(double));
            }
            spec += metric.name;
            cells_.push_back(
                {metric.value, specs_.intern(spec, "a report with more than 2^31 - 1 metric rules"), metric.passed});
        }
        metrics_.assign(i, cells_.begin(), cells_.end());
        core.reference_tensor = store_text(row.reference_tensor);
        core.target_tensor = store_text(row.target_tensor);
        core.message = store_text(row.message);
        core.kind = row.kind ? std::uint8_t(int(*row.kind) + 1) : 0;
        core.strategy = strategies_.intern(row.strategy, "a report with more than 2^31 - 1 strategies");
        core.op = ops_.intern(row.op, "a report with more than 2^31 - 1 distinct ops");
        if (row.confidence) {
            core.confidence = *row.confidence;
            core.flags |= has_confidence_bit;
        }
        core.repair = row.repair;
        if (row.fails_every_candidate) core.flags |= fails_every_candidate_bit;
        core.dtype_reference = row.dtype_reference ? std::uint8_t(*row.dtype_reference) : no_dtype;
        core.dtype_target = row.dtype_target ? std::uint8_t(*row.dtype_target) : no_dtype;
        core.count = row.count;
        core.status = row.status;
        core.order = row.order;
        if (row.error_origin) core.flags |= error_origin_bit;
        if (row.suspect) core.flags |= suspect_bit;
        core.rare = core_[i].rare;
        if (!row.quantization_reference.empty() || !row.quantization_target.empty() || row.error_detail) {
            if (core.rare == no_rare) {
                if (rare_.size() >= no_rare)
                    throw error(error_kind::limit, "a report with more than 2^32 - 1 rare rows");
                core.rare = std::uint32_t(rare_.size());
                rare_.emplace_back();
            }
            rare_[core.rare] = {row.quantization_reference, row.quantization_target, row.error_detail};
        } else if (core.rare != no_rare) {
            rare_[core.rare] = {}; // left for a later set() of this row to reuse
        }
        core_[i] = core;
    }

    void store_list(detail::list_pool<text_ref>& pool, std::size_t i, const std::vector<std::string>& texts) {
        refs_.clear();
        for (const std::string& text : texts) refs_.push_back(store_text(text));
        pool.assign(i, refs_.begin(), refs_.end());
    }

    // A row's tensor key is often its node's name, and unmatched rows share
    // a few messages: equal texts stored lately are reused.
    text_ref store_text(std::string_view text) {
        return texts_.store_shared(text, "a report with more than 4 GiB of names and messages");
    }

    void truncate(std::size_t rows) noexcept {
        core_.resize(rows);
        reference_nodes_.truncate(rows);
        target_nodes_.truncate(rows);
        ambiguous_with_.truncate(rows);
        shapes_.truncate(rows);
        metrics_.truncate(rows);
    }

    std::vector<row_core> core_;
    detail::text_arena texts_;
    detail::list_pool<text_ref> reference_nodes_{"reference nodes"};
    detail::list_pool<text_ref> target_nodes_{"target nodes"};
    detail::list_pool<text_ref> ambiguous_with_{"ambiguous candidates"};
    detail::list_pool<std::int64_t> shapes_{"shape extents"};
    detail::list_pool<metric_cell> metrics_{"metrics"};
    detail::interned_texts strategies_, ops_, specs_;
    std::vector<rare_fields> rare_;
    // store()'s scratch: a row's lists before they go to a pool.
    std::vector<text_ref> refs_;
    std::vector<metric_cell> cells_;
    std::string spec_scratch_;
};

} // namespace numgap
