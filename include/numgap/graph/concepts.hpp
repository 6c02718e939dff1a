#pragma once
// The graph concepts algorithms ask for. They form one refinement family, so
// they live together in one file (splitting four one-line concepts over four
// files would hide that they refine each other).
//   numgap::graph                    num_nodes + producers + node_name
//   numgap::graph_with_op_types      + op_type customized
//   numgap::graph_with_debug_handles + debug_handles customized
//   numgap::graph_with_output_keys   + output_keys customized
//   numgap::graph_with_output_shapes + output_shape customized
// Optional attributes always have a default, so an algorithm that merely
// *benefits* from one asks for numgap::graph; one that cannot work without it
// asks for the refinement. numgap::detail::check_graph<G>(what) turns a
// missing piece into a static_assert naming it, which reads better than a
// failed requires clause.
#include <cstddef>
#include <string_view>

#include <numgap/graph/debug_handles.hpp>
#include <numgap/graph/node_name.hpp>
#include <numgap/graph/num_nodes.hpp>
#include <numgap/graph/op_type.hpp>
#include <numgap/graph/output_keys.hpp>
#include <numgap/graph/output_shape.hpp>
#include <numgap/graph/producers.hpp>

namespace numgap {

template <class G>
concept graph = requires(const G& g, std::size_t i) {
    numgap::num_nodes(g);
    numgap::producers(g, i);
    numgap::node_name(g, i);
};

template <class G>
concept graph_with_op_types = graph<G> && has_op_types<G>;

template <class G>
concept graph_with_debug_handles = graph<G> && has_debug_handles<G>;

template <class G>
concept graph_with_output_keys = graph<G> && has_output_keys<G>;

template <class G>
concept graph_with_output_shapes = graph<G> && has_output_shapes<G>;

namespace detail {

// Instantiated inside each algorithm so a user whose type misses a piece
// reads which piece, not a wall of overload-resolution notes.
template <class G>
constexpr void check_graph() {
    static_assert(requires(const G& g) { numgap::num_nodes(g); },
                  "This type is not a numgap::graph: give it a member num_nodes() or a free "
                  "function num_nodes(const G&) (found by ADL) returning the node count.");
    static_assert(requires(const G& g, std::size_t i) { numgap::producers(g, i); },
                  "This type is not a numgap::graph: give it a member producers(i) or a free "
                  "function producers(const G&, std::size_t) (found by ADL) returning a range of "
                  "the node indices that feed node i.");
    static_assert(requires(const G& g, std::size_t i) { numgap::node_name(g, i); },
                  "This type is not a numgap::graph: give it a member node_name(i) or a free "
                  "function node_name(const G&, std::size_t) (found by ADL) returning something "
                  "convertible to std::string_view.");
}

template <class G>
constexpr void check_graph_with_debug_handles() {
    check_graph<G>();
    static_assert(has_debug_handles<G>,
                  "Matching by debug handle needs debug handles: give the graph type a member "
                  "debug_handles(i) or a free function debug_handles(const G&, std::size_t) "
                  "(found by ADL) returning a range of std::int64_t.");
}

} // namespace detail
} // namespace numgap
