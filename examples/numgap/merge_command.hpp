#pragma once
// `numgap merge`: read the partial reports of every shard of one
// `numgap compare --shard I/N` run, rebuild the whole report, print, write
// and exit exactly as the unsharded `numgap compare` would (see main.cpp).
#include "arguments.hpp"

namespace numgap_cli {

int run_merge(const merge_arguments& arguments);

} // namespace numgap_cli
