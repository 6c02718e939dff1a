#pragma once
// numgap::io::qnn_raw_source: the output folder of `qnn-net-run --debug`
// (Qualcomm AI Engine Direct), a run of headerless tensor files.
//
// Detection (open_run_source.hpp): a directory without graph.json that has no
// *.npy or *.safetensors file at its top and holds either *.raw files or
// `Result_<N>` subfolders there. (A folder with a graph.json is a run
// directory, whose "tensors" entries may describe raw files; directory_source.hpp.)
//
// Which folder: with `Result_<N>` subfolders, `RUN#N` or `RUN#Result_N` picks
// one; without a selector Result_0 is read (the lowest N when there is no
// Result_0) and a note says so. Without such subfolders the folder itself
// holds the files and takes no selector.
//
// Keys: every regular *.raw file beneath the chosen folder (subfolders
// included, directory links not followed) is a tensor keyed by its path
// relative to that folder without ".raw", '/'-separated
// ("Result_0/conv1/Conv_output_0.raw" read as RUN#0 -> "conv1/Conv_output_0").
// QNN writes a tensor's name with characters a file name cannot hold replaced,
// and may decorate it (`@k`, `_k`); the default name normaliser does not undo
// the bare `_k` (it would merge distinct tensors): use --name-rule.
//
// dtype, shape, layout and quantization, first that applies:
//  1. an overlay graph.json given with the run (run_overlay.hpp, CLI --overlay):
//     its "tensors" entry replaces everything below for that key;
//  2. the QNN converter's model JSON (read_policy::qnn_net_json, CLI
//     --qnn-net-json; qnn_net_json.hpp), matched by the key, or by the key
//     equal to the JSON name with every character outside [A-Za-z0-9_]
//     replaced by '_' (when two JSON names give one file name, that file is
//     refused, naming both, unless an overlay describes it). Per-tensor and
//     per-axis encodings become the view's quantization; a tensor whose
//     data_type numgap does not read, or whose encoding it cannot represent
//     (block/LPBQ) and whose file holds the integers, is refused when loaded
//     with the reason (never inferred or compared undequantized). A
//     fixed-point tensor whose file holds exactly 4 bytes
//     per element is read as float32 without quantization (qnn-net-run
//     writes dequantized float outputs unless told to write native ones), and
//     the group's message says so;
//  3. otherwise inferred from the reference tensor it is matched with
//     (load_like): dtype read_policy::raw_dtype (float32 unless --raw-dtype),
//     the reference's element count required (else an error naming both), and
//     the layout read_policy::raw_tensor_layout: `nhwc` (default) reads a
//     rank >= 3 file as the reference's (N, C, d...) stored channels-last,
//     (N, d..., C), with axis_order [0, 2, ..., r-1, 1]; `nchw` and
//     `as_reference` read it in the reference's own shape. The inference is
//     stated in the group's message, and opening adds a note (the CLI prints
//     it on stderr). load() without a reference refuses such a tensor.
// The file's size must match the dtype and shape exactly.
//
// Trust: files are opened beneath the chosen folder (confined_open.hpp) and
// mapped, never copied. Errors name the file and the key.
// Complexity: open is O(files + model JSON); load O(1).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/shape.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/confined_open.hpp>
#include <numgap/io/loaded_tensor.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/qnn_net_json.hpp>
#include <numgap/io/qnn_result_folder.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/io/run_source.hpp>

namespace numgap::io {

namespace detail {

// The name with every character outside [A-Za-z0-9_] replaced by '_'.
inline std::string qnn_file_name_of(std::string_view name) {
    std::string file(name);
    for (char& c : file)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    return file;
}

} // namespace detail

class qnn_raw_source final : public run_source {
public:
    // Whether `folder` is a QNN raw output folder (the rule at the top); never throws.
    static bool looks_like(const std::filesystem::path& folder) noexcept {
        std::error_code failure;
        bool raw_or_results = false;
        for (std::filesystem::directory_iterator entry(folder, failure), end; !failure && entry != end;
             entry.increment(failure)) {
            const std::string name = entry->path().filename().string();
            if (name == "graph.json" || name.ends_with(".npy") || name.ends_with(".safetensors")) return false;
            std::error_code type_failure;
            if (name.ends_with(".raw") && entry->is_regular_file(type_failure)) raw_or_results = true;
            if (detail::qnn_result_index(name) && entry->is_directory(type_failure)) raw_or_results = true;
        }
        return !failure && raw_or_results;
    }

    static opened_run_source open(const std::filesystem::path& path, const std::optional<std::string>& selector,
                                  const read_policy& policy) {
        auto source = std::shared_ptr<qnn_raw_source>(new qnn_raw_source());
        opened_run_source opened;
        source->folder_ = choose_qnn_result_folder(path, selector, opened.notes);
        source->roots_ = detail::run_roots(source->folder_, policy);
        source->raw_dtype_ = policy.raw_dtype.value_or(dtype::float32);
        source->layout_ = policy.raw_tensor_layout;
        source->list(opened);
        if (!policy.qnn_net_json.empty()) source->describe(opened, policy.qnn_net_json);
        const auto undescribed = std::count_if(opened.manifest.tensors.begin(), opened.manifest.tensors.end(),
                                               [&](const tensor_spec& spec) {
                                                   return (!spec.type || !spec.shape) && source->unreadable_.count(spec.key) == 0;
                                               });
        if (undescribed != 0)
            opened.notes.push_back(
                "'" + source->folder_.string() + "': " + std::to_string(undescribed) + " of " +
                std::to_string(opened.manifest.tensors.size()) +
                " raw tensors have no dtype or shape (no --qnn-net-json entry): unless an overlay describes them, each "
                "is read as " + std::string(name_of(source->raw_dtype_)) + " in the shape of the reference tensor it "
                "is matched with, layout " + layout_name(source->layout_));
        opened.source = std::move(source);
        return opened;
    }

    loaded_tensor load(const tensor_spec& spec) const override {
        refuse_unreadable(spec);
        if (!spec.type || !spec.shape)
            throw error(error_kind::schema,
                        "raw file '" + spec.file + "' has no dtype or shape: describe it in an overlay graph.json or "
                        "--qnn-net-json, or compare it with a reference tensor to infer them",
                        error_location::at_item((folder_ / spec.file).string(), spec.key));
        auto [state, bytes] = map_file(spec);
        const std::string shown = (folder_ / spec.file).string();
        // Only a type narrower than 4 bytes can be told apart from float32 by
        // its size: a native 32-bit integer output is read as what it says.
        const bool dequantized = dequantized_candidates_.count(spec.key) != 0 && spec.type != dtype::float32 &&
                                 size_of(*spec.type) < 4 &&
                                 numgap::detail::checked_byte_count(*spec.shape, 4) == bytes.size();
        if (dequantized) {
            tensor_spec as_float = spec;
            as_float.type = dtype::float32;
            as_float.affine.reset();
            state->view = detail::raw_tensor_view(bytes, as_float, shown);
            state->note = "'" + spec.file + "' holds float32 (qnn-net-run's dequantized output), not the model JSON's " +
                          std::string(name_of(*spec.type));
            detail::finish_loaded_tensor(as_float, *state, shown);
        } else {
            // Integers whose scales numgap cannot hold would be compared as if
            // they were real values: refuse them rather than show a wrong number.
            if (const auto encoding = undequantizable_.find(spec.key);
                encoding != undequantizable_.end() && !spec.affine && is_integer(*spec.type))
                throw error(error_kind::dtype,
                            "raw file '" + shown + "' holds " + std::string(name_of(*spec.type)) + " integers, but " +
                                encoding->second + "; give qnn-net-run's dequantized float32 output, or an overlay "
                                "graph.json with per-tensor or per-axis parameters",
                            error_location::at_item(shown, spec.key));
            state->view = detail::raw_tensor_view(bytes, spec, shown);
            detail::finish_loaded_tensor(spec, *state, shown);
        }
        return loaded_tensor(std::move(state));
    }

    loaded_tensor load_like(const tensor_spec& spec, const tensor_view& reference) const override {
        refuse_unreadable(spec);
        if (spec.type && spec.shape) return load(spec);
        const auto logical = reference.logical_shape();
        const std::vector<std::int64_t> reference_shape(logical.begin(), logical.begin() + reference.rank());
        tensor_spec inferred = spec;
        inferred.type = spec.type.value_or(raw_dtype_);
        const int rank = reference.rank();
        if (layout_ == raw_layout::nhwc && rank >= 3) {
            std::vector<std::int64_t> stored{reference_shape[0]};
            std::vector<int> order{0};
            for (int d = 2; d < rank; ++d) {
                stored.push_back(reference_shape[std::size_t(d)]);
                order.push_back(d);
            }
            stored.push_back(reference_shape[1]);
            order.push_back(1);
            inferred.shape = std::move(stored);
            inferred.axis_order = std::move(order);
        } else {
            inferred.shape = reference_shape;
            inferred.axis_order.reset();
        }
        auto [state, bytes] = map_file(spec);
        const std::string shown = (folder_ / spec.file).string();
        const std::size_t item = size_of(*inferred.type);
        if (numgap::detail::checked_storage_bytes(reference_shape, *inferred.type) != bytes.size())
            throw error(error_kind::shape,
                        "raw file '" + shown + "' has " + std::to_string(bytes.size()) + " bytes (" +
                            (bytes.size() % item == 0 && !is_packed(*inferred.type) ? std::to_string(bytes.size() / item) : std::string("not a whole number of")) +
                            " " + std::string(name_of(*inferred.type)) + " elements), but the reference tensor '" +
                            std::string(reference.name()) + "' it is matched with has shape " +
                            numgap::detail::shape_text(reference_shape) +
                            "; describe the file with --qnn-net-json or an overlay, or give --raw-dtype",
                        error_location::at_item(shown, spec.key));
        state->view = detail::raw_tensor_view(bytes, inferred, shown);
        state->note = "dtype " + std::string(name_of(*inferred.type)) + " and shape " +
                      numgap::detail::shape_text(*inferred.shape) + " of raw file '" + spec.file +
                      "' inferred from reference tensor '" + std::string(reference.name()) + "' (layout " +
                      (inferred.axis_order || layout_ != raw_layout::nhwc ? layout_name(layout_)
                                                                          : std::string("of the reference: rank below 3")) +
                      ")";
        detail::finish_loaded_tensor(inferred, *state, shown);
        return loaded_tensor(std::move(state));
    }

    std::optional<std::vector<std::int64_t>> stored_shape(const tensor_spec& spec) const override { return spec.shape; }

    std::string missing_reason(std::string_view key, const run_manifest&) const override {
        return "no file '" + std::string(key) + ".raw' in '" + folder_.string() + "'";
    }

private:
    qnn_raw_source() = default;

    static std::string layout_name(raw_layout layout) {
        switch (layout) {
        case raw_layout::nhwc: return "nhwc";
        case raw_layout::nchw: return "nchw";
        case raw_layout::as_reference: return "as-reference";
        }
        return {};
    }

    void list(opened_run_source& opened) {
        std::vector<tensor_spec> found;
        std::error_code failure;
        std::filesystem::recursive_directory_iterator entry(folder_, failure), end;
        for (; !failure && entry != end; entry.increment(failure)) {
            std::error_code type_failure;
            const std::filesystem::path& file = entry->path();
            if (file.extension() != ".raw" || !entry->is_regular_file(type_failure) || entry->is_symlink(type_failure))
                continue;
            const std::string relative = file.lexically_relative(folder_).generic_string();
            tensor_spec spec;
            spec.key = relative.substr(0, relative.size() - 4);
            spec.file = relative;
            const std::uintmax_t size = entry->file_size(type_failure);
            if (!type_failure) opened.total_bytes += size;
            found.push_back(std::move(spec));
        }
        if (failure)
            throw error(error_kind::io, "cannot list run '" + folder_.string() + "': " + failure.message(),
                        error_location::in_file(folder_.string()));
        detail::merge_specs(opened.manifest, std::move(found));
    }

    void describe(opened_run_source& opened, const std::filesystem::path& net_json) {
        const mapped_file text = mapped_file::map(detail::open_run_file(net_json), net_json);
        std::map<std::string, qnn_tensor_description> described =
            read_qnn_net_json(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), net_json.string());
        text.check_intact();
        std::map<std::string, std::vector<const std::string*>> names_by_file_name;
        for (const auto& [name, description] : described) names_by_file_name[detail::qnn_file_name_of(name)].push_back(&name);
        std::size_t ambiguous = 0;
        for (tensor_spec& spec : opened.manifest.tensors) {
            const auto exact = described.find(spec.key);
            const auto renamed = names_by_file_name.find(spec.key);
            if (exact == described.end() && renamed != names_by_file_name.end() && renamed->second.size() > 1) {
                // Two names QNN writes to one file: which one was dumped is unknowable.
                unreadable_[spec.key] = "'" + net_json.string() + "' describes both '" + *renamed->second[0] + "' and '" +
                                        *renamed->second[1] + "', whose file names are both '" + spec.key +
                                        ".raw': describe the file in an overlay graph.json";
                ++ambiguous;
                continue;
            }
            const qnn_tensor_description* description =
                exact != described.end() ? &exact->second
                : renamed != names_by_file_name.end() ? &described.at(*renamed->second.front())
                                                      : nullptr;
            if (description != nullptr) apply(*description, spec);
        }
        opened.notes.push_back("'" + folder_.string() + "': dtype, shape and quantization from '" + net_json.string() + "'");
        if (ambiguous != 0)
            opened.notes.push_back("'" + net_json.string() + "': " + std::to_string(ambiguous) +
                                   " raw file names match two of its tensor names; those files are not read unless an "
                                   "overlay describes them");
    }

    void apply(const qnn_tensor_description& description, tensor_spec& spec) {
        spec.shape = description.dims;
        if (!description.unsupported_type.empty()) {
            unreadable_[spec.key] = description.unsupported_type + "; describe the file in an overlay graph.json";
            return;
        }
        spec.type = description.type;
        spec.axis_order = description.axis_order;
        if (description.scale) {
            spec.affine = tensor_spec::affine_spec{{*description.scale}, {description.zero_point}, -1};
        } else if (description.quant_axis >= 0) {
            spec.affine =
                tensor_spec::affine_spec{description.axis_scales, description.axis_zero_points, description.quant_axis};
        }
        if (!description.unsupported_encoding.empty()) undequantizable_[spec.key] = description.unsupported_encoding;
        if (description.fixed_point) dequantized_candidates_.insert(spec.key);
    }

    // Throws why `spec` cannot be read when the model JSON said so and no
    // overlay described it since.
    void refuse_unreadable(const tensor_spec& spec) const {
        if (spec.type && spec.shape) return;
        if (const auto reason = unreadable_.find(spec.key); reason != unreadable_.end())
            throw error(error_kind::dtype, "raw file '" + (folder_ / spec.file).string() + "': " + reason->second,
                        error_location::at_item((folder_ / spec.file).string(), spec.key));
    }

    std::pair<std::unique_ptr<detail::loaded_tensor_state>, std::span<const std::byte>> map_file(const tensor_spec& spec) const {
        std::unique_ptr<detail::loaded_tensor_state> state = detail::start_loading(spec, spec.file);
        const std::filesystem::path file = folder_ / spec.file;
        state->mapping = std::make_shared<const mapped_file>(
            mapped_file::map(detail::open_tensor_file(*roots_, spec, file.string()), file));
        const std::span<const std::byte> bytes = state->mapping->bytes();
        return {std::move(state), bytes};
    }

    std::filesystem::path folder_; // the Result_<N> folder read, or the run itself
    std::shared_ptr<const std::vector<confined_root>> roots_;
    dtype raw_dtype_ = dtype::float32;
    raw_layout layout_ = raw_layout::nhwc;
    std::set<std::string> dequantized_candidates_; // keys the model JSON gives a fixed-point type
    std::map<std::string, std::string> unreadable_;      // key -> why the model JSON cannot describe it
    std::map<std::string, std::string> undequantizable_; // key -> the quantization numgap cannot represent
};

} // namespace numgap::io
