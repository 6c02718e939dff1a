#pragma once
// numgap: find where a neural network's numbers go wrong. The umbrella header;
// each part also has its own aggregate header.
#include <numgap/core.hpp>
#include <numgap/kernels.hpp>
#include <numgap/metric.hpp>
#include <numgap/graph.hpp>
#include <numgap/match.hpp>
#include <numgap/io.hpp>
#include <numgap/compare.hpp>
#include <numgap/report.hpp>
