#pragma once
// Node matching: which target nodes correspond to which reference nodes.
#include <numgap/match/canonical_op.hpp>
#include <numgap/match/common_name_normalizer.hpp>
#include <numgap/match/default_fusion_rule.hpp>
#include <numgap/match/default_op_equivalence.hpp>
#include <numgap/match/default_passthrough_op.hpp>
#include <numgap/match/match_auto.hpp>
#include <numgap/match/match_by_handle.hpp>
#include <numgap/match/match_by_name.hpp>
#include <numgap/match/match_by_structure.hpp>
#include <numgap/match/match_explicit.hpp>
#include <numgap/match/match_group.hpp>
#include <numgap/match/match_kind.hpp>
#include <numgap/match/match_options.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/match/node_list.hpp>
