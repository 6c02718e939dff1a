#pragma once
// numgap::detail::structure_node_attributes: what structural matching knows
// about each node of one graph, computed once: op spelling, canonical family,
// the families of a fused name's parts, the "primary" family (the first part
// of a fused name, else the family: what a fusion keeps visible), whether the
// op is a passthrough or commutative (operand order is no evidence: backends
// reorder the inputs of add/mul/max/min), whether its family is one
// canonical_op knows, and output 0's shape.
// shape_agreement(a, b): 1 equal, 0.9 equal up to a permutation, 0.5 unknown
// or same element count, 0 different element counts.
// O(N · length of op) to build; never throws except std::bad_alloc.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/match/canonical_op.hpp>

namespace numgap::detail {

inline double shape_agreement(const std::optional<shape_type>& a, const std::optional<shape_type>& b) {
    if (!a || !b) return 0.5;
    if (*a == *b) return 1.0;
    auto sorted_a = *a, sorted_b = *b;
    std::sort(sorted_a.begin(), sorted_a.end());
    std::sort(sorted_b.begin(), sorted_b.end());
    if (sorted_a == sorted_b) return 0.9;
    auto count = [](const shape_type& shape) {
        std::int64_t elements = 1;
        for (auto dim : shape) elements *= dim;
        return elements;
    };
    return count(*a) == count(*b) ? 0.5 : 0.0;
}

inline bool is_commutative_family(std::string_view family) {
    return family == "add" || family == "mul" || family == "max" || family == "min" || family == "maximum" ||
           family == "minimum";
}

template <class G>
struct structure_node_attributes {
    std::vector<std::string> op;
    std::vector<std::string> family;
    std::vector<std::vector<std::string>> parts; // families of a fused op's parts (empty otherwise)
    std::vector<std::string> primary;            // parts.front() for a fused op, else family
    std::vector<char> passthrough;
    std::vector<char> commutative;
    std::vector<char> recognised; // the primary family is in canonical_op's table
    std::vector<std::optional<shape_type>> shape;

    structure_node_attributes(const G& g, std::size_t n, const std::function<bool(std::string_view)>& is_passthrough)
        : op(n), family(n), parts(n), primary(n), passthrough(n, 0), commutative(n, 0), recognised(n, 0), shape(n) {
        for (std::size_t node = 0; node < n; ++node) {
            op[node] = std::string(std::string_view(numgap::op_type(g, node)));
            family[node] = canonical_op(op[node]);
            auto families = op_families(op[node]);
            if (families.size() > 1) parts[node].assign(families.begin() + 1, families.end());
            primary[node] = parts[node].empty() ? family[node] : parts[node].front();
            passthrough[node] = !op[node].empty() && is_passthrough(op[node]);
            commutative[node] = is_commutative_family(primary[node]);
            recognised[node] = detail::is_known_family(primary[node]);
            shape[node] = numgap::output_shape(g, node, 0);
        }
    }
};

} // namespace numgap::detail
