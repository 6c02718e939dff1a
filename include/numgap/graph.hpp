#pragma once
// Graph adapters: concepts, customization points, an owning graph and the
// graph utilities the matchers use.
#include <numgap/graph/ancestors.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/graph/consumer_lists.hpp>
#include <numgap/graph/debug_handles.hpp>
#include <numgap/graph/is_reachable.hpp>
#include <numgap/graph/node_name.hpp>
#include <numgap/graph/num_nodes.hpp>
#include <numgap/graph/op_type.hpp>
#include <numgap/graph/output_keys.hpp>
#include <numgap/graph/output_shape.hpp>
#include <numgap/graph/producers.hpp>
#include <numgap/graph/topological_order.hpp>
