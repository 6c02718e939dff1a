#pragma once
// End-to-end comparison of two runs: tensor sources, the run-directory graph,
// compare_runs (or its two stages, compare_groups and build_report) and the
// failing-pair dumps.
#include <numgap/compare/build_report.hpp>
#include <numgap/compare/compare_groups.hpp>
#include <numgap/compare/compare_options.hpp>
#include <numgap/compare/compare_runs.hpp>
#include <numgap/compare/compare_shard.hpp>
#include <numgap/compare/compared_groups.hpp>
#include <numgap/compare/describe_quantization.hpp>
#include <numgap/compare/dump_failing_pairs.hpp>
#include <numgap/compare/group_bytes.hpp>
#include <numgap/compare/run_graph.hpp>
#include <numgap/compare/shard_plan.hpp>
#include <numgap/compare/tensor_source.hpp>
