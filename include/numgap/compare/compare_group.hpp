#pragma once
// The comparison of one match group, shared by compare_groups (every group,
// on worker threads) and the repair pass (a group compared again), and the
// report names of a graph's nodes: the steps compare_runs.hpp describes.
//
// compare_group(row, ...) loads the row's two tensors from their sources,
// evaluates the metrics and writes the outcome into the row: `pass`/`fail`
// with metrics, `missing` (a key the source does not hold), `error` (a load
// failure, an incompatible pair, any exception) with the message and, for a
// numgap::error, its kind and location. It never throws for one group's
// failure. report_name_table gives every node a unique report name.
// Complexity: compare_group O(elements of the pair); report names O(N).
// Throws: std::bad_alloc (compare_group turns everything else into the row).
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <numgap/compare/describe_quantization.hpp>
#include <numgap/compare/tensor_source.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/match/node_list.hpp>
#include <numgap/metric/evaluate.hpp>
#include <numgap/metric/evaluate_segments.hpp>
#include <numgap/metric/evaluation.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/group_report.hpp>

namespace numgap {

namespace detail {
// Whether the n names name_at(i) are all given and unique, the usual case:
// checked without copying a name into a map.
template <class NameAt>
bool names_given_and_unique(std::size_t n, NameAt name_at) {
    if (n >= max_key_positions) return false;
    positional_key_index distinct(name_at, n);
    std::size_t i = 0;
    while (i < n && !name_at(i).empty() && distinct.insert(name_at(i), i).second) ++i;
    return i == n;
}

// Report names for every node of g: its own name, made unique when needed.
template <graph G>
std::vector<std::string> report_names(const G& g) {
    const std::size_t n = numgap::num_nodes(g);
    std::vector<std::string> names(n);
    for (std::size_t i = 0; i < n; ++i) names[i] = std::string(numgap::node_name(g, i));
    if (names_given_and_unique(n, [&](std::size_t i) -> std::string_view { return names[i]; })) return names;
    std::unordered_map<std::string, std::size_t> seen;
    seen.reserve(n);
    for (std::size_t i = 0; i < n; ++i) ++seen[names[i]];
    // A suffix may itself be a name the graph uses (`a`, `a`, `a#1`): try
    // further suffixes until the name is free, so every row's name is unique.
    for (std::size_t i = 0; i < n; ++i) {
        if (!names[i].empty() && seen[names[i]] == 1) continue;
        const std::string base = names[i] + "#";
        for (std::size_t suffix = i;; suffix += n) {
            std::string candidate = base + std::to_string(suffix);
            if (seen.emplace(candidate, 1).second) {
                names[i] = std::move(candidate);
                break;
            }
        }
    }
    return names;
}

// A graph that says whether its names are all given and unique, and opts in
// to being trusted on it (basic_graph: G::tracks_unique_names).
template <class G>
concept knows_unique_names = requires(const G& g) {
    requires G::tracks_unique_names;
    { g.names_given_and_unique() } -> std::convertible_to<bool>;
};

// The report names of g's nodes (report_names) as `table[i]`. When g's
// node_name gives a const std::string& or a std::string_view (text the
// graph keeps, as basic_graph's) and every name is given and unique (the
// usual case), the table refers to the graph's own text: a run of a million
// nodes is not copied name by name for the report. Else it holds
// report_names(g). The graph must outlive the table.
template <graph G>
class report_name_table {
    using given_name = decltype(numgap::node_name(std::declval<const G&>(), std::size_t{}));
    static constexpr bool can_refer =
        std::is_same_v<given_name, const std::string&> || std::is_same_v<given_name, std::string_view>;

public:
    explicit report_name_table(const G& g) : graph_(&g) {
        if constexpr (can_refer) {
            // A graph that knows its names are unique (basic_graph) is taken at its word.
            if constexpr (knows_unique_names<G>)
                if (g.names_given_and_unique()) return;
            if (names_given_and_unique(numgap::num_nodes(g),
                                       [&g](std::size_t i) -> std::string_view { return numgap::node_name(g, i); }))
                return;
        }
        owned_ = report_names(g);
        owns_ = true;
    }
    std::string_view operator[](std::size_t i) const {
        if constexpr (can_refer)
            if (!owns_) return numgap::node_name(*graph_, i);
        return owned_[i];
    }
    // Whether the names are the graph's own strings (for tests).
    bool refers_to_graph() const noexcept { return !owns_; }
    // Every node's name, owned: the table's own, or copies of the graph's
    // (for a caller that destroys the graph next).
    std::vector<std::string> names() && {
        if (owns_) return std::move(owned_);
        std::vector<std::string> copied;
        if constexpr (can_refer) {
            const std::size_t count = numgap::num_nodes(*graph_);
            copied.reserve(count);
            for (std::size_t i = 0; i < count; ++i) copied.emplace_back(numgap::node_name(*graph_, i));
        }
        return copied;
    }

private:
    const G* graph_;
    bool owns_ = false;
    std::vector<std::string> owned_;
};

template <class Names>
std::vector<std::string> names_of(const Names& names, const node_list& nodes) {
    std::vector<std::string> result;
    result.reserve(nodes.size());
    for (std::size_t node : nodes) result.emplace_back(names[node]);
    return result;
}

inline void fill_metrics(group_report& row, const evaluation& result) {
    row.count = result.count;
    row.metrics.clear();
    row.metrics.reserve(result.metrics.size());
    bool all_passed = true;
    for (const metric_result& metric : result.metrics) {
        report_metric entry;
        entry.name = metric.name;
        entry.value = metric.value;
        entry.rule = metric.rule;
        entry.passed = metric.passed;
        all_passed = all_passed && metric.passed;
        row.metrics.push_back(std::move(entry));
    }
    row.status = all_passed ? group_status::pass : group_status::fail;
}

// A check of a whole mapping, left for after the last group that read it.
struct deferred_intact_check {
    std::shared_ptr<const void> mapping; // kept alive until checked; empty: nothing left to check
    void (*check)(const void*) = nullptr;
};

// A holder that can tell its data changed while it was read (io::loaded_tensor:
// a file truncated while mapped) throws here, turning the group into `error`.
// With may_defer, a holder reading a mapping the run keeps open
// (run_mapping()) checks only what costs no system call now and returns the
// mapping's own check, for compare_runs to run once after all groups: a
// million tensors of one safetensors file were a million fstat calls.
template <class Holder>
deferred_intact_check check_intact(const Holder& holder, bool may_defer) {
    if constexpr (requires {
                      holder.run_mapping();
                      holder.check_intact_except_run_mapping_size();
                      holder.run_mapping()->check_intact();
                  }) {
        if (may_defer)
            if (auto mapping = holder.run_mapping()) {
                holder.check_intact_except_run_mapping_size();
                using mapping_type = std::remove_cvref_t<decltype(*mapping)>;
                return {std::move(mapping),
                        [](const void* held) { static_cast<const mapping_type*>(held)->check_intact(); }};
            }
    }
    if constexpr (requires { holder.check_intact(); }) holder.check_intact();
    return {};
}

// Turns `row` into an `error` row for `failure`.
inline void set_error(group_report& row, const error& failure) {
    row.status = group_status::error;
    row.metrics.clear();
    row.message = failure.what();
    row.error_detail = group_error{failure.kind(), failure.where()};
}

// Compares the row's two tensors into the row. With shapes_are_evidence (a
// structural pair), tensors whose shapes differ after axis_order are not
// evaluated: the row is left `error` with a message giving both shapes and the
// function returns true, for repair_pairings to settle.
// With `deferred`, the whole-file checks of tensors read in place from
// mappings the runs keep open are stored there (reference, target) instead of
// run; the caller runs them after the last group (see check_intact).
template <class RefSource, class TargetSource>
bool compare_group(group_report& row, RefSource& reference_source, TargetSource& target_source,
                   const metric_set& metrics, const evaluate_options& options, bool shapes_are_evidence = false,
                   std::pair<deferred_intact_check, deferred_intact_check>* deferred = nullptr) {
    row.error_detail.reset(); // a row compared again (repair) must not keep an old cause
    if (row.reference_tensor.empty() || row.target_tensor.empty()) {
        row.status = group_status::missing;
        row.message = row.reference_tensor.empty()
                          ? "the reference nodes of this group have no output tensor to compare"
                          : "the target nodes of this group have no output tensor to compare";
        return false;
    }
    try {
        auto reference = fetch_tensor(reference_source, row.reference_tensor);
        // The target may take its dtype and shape from the reference (a QNN raw folder).
        auto target = reference ? fetch_tensor_like(target_source, row.target_tensor, view_of(*reference))
                                : fetch_tensor(target_source, row.target_tensor);
        if (!reference || !target) {
            row.status = group_status::missing;
            row.message = !reference && !target ? "neither tensor was dumped (reference '" + row.reference_tensor +
                                                      "', target '" + row.target_tensor + "')"
                          : !reference ? "reference tensor '" + row.reference_tensor + "' was not dumped"
                                       : "target tensor '" + row.target_tensor + "' was not dumped";
            return false;
        }
        tensor_view reference_view = view_of(*reference);
        tensor_view target_view = view_of(*target);
        // Name the views after their keys when the source did not, so that
        // validation errors say which tensor is wrong.
        if (reference_view.name().empty()) reference_view.with_name(row.reference_tensor);
        if (target_view.name().empty()) target_view.with_name(row.target_tensor);
        row.dtype_reference = reference_view.type();
        row.dtype_target = target_view.type();
        row.quantization_reference = describe_quantization(reference_view);
        row.quantization_target = describe_quantization(target_view);
        const auto logical = reference_view.logical_shape();
        row.shape.assign(logical.begin(), logical.begin() + reference_view.rank());
        if (shapes_are_evidence) {
            const auto target_logical = target_view.logical_shape();
            const std::vector<std::int64_t> target_shape(target_logical.begin(),
                                                         target_logical.begin() + target_view.rank());
            if (target_shape != row.shape) {
                row.status = group_status::error;
                row.metrics.clear();
                row.error_detail = group_error{error_kind::shape, error_location::of_item(row.target_tensor)};
                row.message = "structure matching paired reference tensor '" + row.reference_tensor + "' (shape " +
                              format_list(row.shape) + ") with target tensor '" + row.target_tensor + "' (shape " +
                              format_list(target_shape) + "), whose shapes differ";
                return true;
            }
        }
        tensor_segment reference_whole, target_whole;
        const segmented_view reference_segments = segments_of(*reference, reference_whole);
        const segmented_view target_segments = segments_of(*target, target_whole);
        if (reference_segments.is_split() || target_segments.is_split()) {
            // Tensor-parallel shards: compared piece by piece, never concatenated.
            reference_whole.view = reference_view;
            target_whole.view = target_view;
            fill_metrics(row, evaluate_segments(reference_segments, target_segments, metrics, options));
            for (const auto& [side, segments] :
                 {std::pair{"reference", reference_segments}, std::pair{"target", target_segments}})
                if (segments.is_split())
                    row.message += (row.message.empty() ? "" : "; ") + std::string(side) + " stored as " +
                                   std::to_string(segments.segments.size()) + " shards along axis " +
                                   std::to_string(segments.axis);
        } else {
            fill_metrics(row, evaluate(reference_view, target_view, metrics, options));
        }
        // What the target's source inferred (a QNN raw file's dtype and shape) is part of the result.
        if constexpr (requires { target->note(); })
            if (!target->note().empty()) row.message += (row.message.empty() ? "" : "; ") + target->note();
        const deferred_intact_check reference_later = check_intact(*reference, deferred != nullptr);
        const deferred_intact_check target_later = check_intact(*target, deferred != nullptr);
        if (deferred != nullptr) *deferred = {reference_later, target_later};
        // Read once: a tensor of a file the run keeps mapped gives its pages
        // back, so a run held in one large file is not resident whole.
        if constexpr (requires { reference->release_run_pages(); }) reference->release_run_pages();
        if constexpr (requires { target->release_run_pages(); }) target->release_run_pages();
    } catch (const error& failure) {
        set_error(row, failure);
    } catch (const std::exception& failure) {
        row.status = group_status::error;
        row.metrics.clear();
        row.message = failure.what();
    } catch (...) {
        // A source or user metric may throw anything (an int, a foreign
        // library's type); it is still one group's failure, not the run's.
        row.status = group_status::error;
        row.metrics.clear();
        row.message = "unknown exception (not derived from std::exception)";
    }
    return false;
}
} // namespace detail

} // namespace numgap
