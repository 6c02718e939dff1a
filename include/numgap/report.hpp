#pragma once
// Comparison reports: the plain-data model, its analysis (first divergence,
// error origins) and the writers (CSV, JSON, DOT, Model Explorer, table).
// Rendering DOT to SVG spawns Graphviz and belongs to the command-line tool
// (examples/numgap/render_svg.hpp), not to the library.
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/comparison_report.hpp>
#include <numgap/report/csv.hpp>
#include <numgap/report/dot.hpp>
#include <numgap/report/dot_neighbourhood.hpp>
#include <numgap/report/format_double.hpp>
#include <numgap/report/group_error.hpp>
#include <numgap/report/group_report.hpp>
#include <numgap/report/group_status.hpp>
#include <numgap/report/repair_state.hpp>
#include <numgap/report/json.hpp>
#include <numgap/report/merge_partial_reports.hpp>
#include <numgap/report/model_explorer.hpp>
#include <numgap/report/partial_report.hpp>
#include <numgap/report/partial_report_json.hpp>
#include <numgap/report/read_partial_report.hpp>
#include <numgap/report/report_metric.hpp>
#include <numgap/report/report_node.hpp>
#include <numgap/report/report_summary.hpp>
#include <numgap/report/summary_table.hpp>
#include <numgap/report/terminal_text.hpp>
