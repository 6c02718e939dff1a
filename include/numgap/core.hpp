#pragma once
// Vocabulary every other part of numgap uses.
#include <numgap/core/boxed.hpp>
#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/float8.hpp>
#include <numgap/core/half.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/core/parallel_for.hpp>
#include <numgap/core/prefetch.hpp>
#include <numgap/core/quantization.hpp>
#include <numgap/core/segmented_view.hpp>
#include <numgap/core/shape.hpp>
#include <numgap/core/slice_along.hpp>
#include <numgap/core/small_vector.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/core/version.hpp>
