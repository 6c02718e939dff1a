#pragma once
// .npy, all of it: reading a header without copying (io/npy/header.hpp), a
// view of the data in place (io/npy/view.hpp) and writing (io/npy/writer.hpp).
//
// Why not xtensor's xt::load_npy (xtensor/xnpy.hpp): it reads the whole file
// through an std::istream into an owned xarray (a full copy, which defeats
// mapping runs larger than RAM), is templated on one element type chosen at
// compile time (the dtype of a dump is only known at run time), and reports
// problems with generic messages that name neither the file nor the expected
// and actual sizes. Its header grammar is the same one parsed here.
#include <numgap/io/npy/header.hpp>
#include <numgap/io/npy/view.hpp>
#include <numgap/io/npy/writer.hpp>
