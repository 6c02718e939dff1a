#pragma once
// File formats: memory-mapped .npy/.npz/raw tensors, graph.json, run sources
// (directories, .npz, safetensors, Polygraphy JSON, ExecuTorch ETDump; see
// io/README.md), and the JSON helpers the report writers use. Data flows
// io -> graph/match -> ...
#include <numgap/io/atomic_file.hpp>
#include <numgap/io/base64.hpp>
#include <numgap/io/byte_signature.hpp>
#include <numgap/io/confined_open.hpp>
#include <numgap/io/crc32.hpp>
#include <numgap/io/directory_source.hpp>
#include <numgap/io/etdump.hpp>
#include <numgap/io/etdump_manifest.hpp>
#include <numgap/io/etdump_run.hpp>
#include <numgap/io/etdump_source.hpp>
#include <numgap/io/file_descriptor.hpp>
#include <numgap/io/flatbuffer.hpp>
#include <numgap/io/inflate.hpp>
#include <numgap/io/json.hpp>
#include <numgap/io/little_endian.hpp>
#include <numgap/io/loaded_tensor.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/mapping_file.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/npz.hpp>
#include <numgap/io/npz_source.hpp>
#include <numgap/io/open_run_source.hpp>
#include <numgap/io/polygraphy_json.hpp>
#include <numgap/io/polygraphy_source.hpp>
#include <numgap/io/qnn_net_json.hpp>
#include <numgap/io/qnn_raw_source.hpp>
#include <numgap/io/qnn_result_folder.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/io/run_overlay.hpp>
#include <numgap/io/run_source.hpp>
#include <numgap/io/safetensors.hpp>
#include <numgap/io/safetensors_run.hpp>
#include <numgap/io/safetensors_source.hpp>
#include <numgap/io/selector_index.hpp>
#include <numgap/io/truncation_guard.hpp>
