#pragma once
// numgap::match_kind: the shape of a match group, from the sizes of its two
// node sets. one_to_one (1 : 1), fused (many reference nodes -> one target
// node, e.g. conv+bn+relu), decomposed (one reference node -> many target
// nodes, e.g. layer_norm lowered to mean/sub/pow/...), many_to_many.
// to_string gives the snake_case spelling used in reports. O(1), no throw.
#include <cstddef>
#include <string_view>

namespace numgap {

enum class match_kind { one_to_one, fused, decomposed, many_to_many };

constexpr std::string_view to_string(match_kind kind) noexcept {
    switch (kind) {
    case match_kind::one_to_one: return "one_to_one";
    case match_kind::fused: return "fused";
    case match_kind::decomposed: return "decomposed";
    case match_kind::many_to_many: return "many_to_many";
    }
    return "unknown";
}

// The kind implied by the sizes of a group's reference and target node sets
// (both at least one).
constexpr match_kind kind_of(std::size_t reference_nodes, std::size_t target_nodes) noexcept {
    if (reference_nodes <= 1 && target_nodes <= 1) return match_kind::one_to_one;
    if (target_nodes <= 1) return match_kind::fused;
    if (reference_nodes <= 1) return match_kind::decomposed;
    return match_kind::many_to_many;
}

} // namespace numgap
