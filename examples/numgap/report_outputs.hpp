#pragma once
// What `numgap compare` and `numgap merge` do with a finished report, in one
// place so the two print and write the same bytes and exit alike: the
// summary table on stdout, the requested files (CSV, JSON, Model Explorer,
// DOT, SVG), and the exit status with its reasons on stderr (main.cpp).
#include <string>

#include <numgap/report/comparison_report.hpp>

namespace numgap_cli {

struct report_outputs {
    std::string csv, json, dot, svg, model_explorer;
};

// Prints the summary table and writes every file `outputs` names.
void print_and_write(const numgap::comparison_report& report, const report_outputs& outputs);

// The exit status the report earns; says why on stderr when it is not 0.
int report_exit_status(const numgap::comparison_report& report);

} // namespace numgap_cli
