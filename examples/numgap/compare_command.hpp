#pragma once
// `numgap compare`: open both runs, match their graphs, compare, print the
// summary table, write the requested files (CSV, JSON, DOT, SVG, Model
// Explorer, failing pairs) and return the exit status (see main.cpp).
#include "arguments.hpp"

namespace numgap_cli {

int run_compare(const compare_arguments& arguments);

} // namespace numgap_cli
