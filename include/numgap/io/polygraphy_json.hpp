#pragma once
// numgap::io::parse_polygraphy_results: the structure of a Polygraphy
// RunResults JSON (`polygraphy run --save-outputs out.json`) as runners,
// iterations and outputs, each output a span of the file holding its encoded
// array (nothing is decoded or copied here); decode_polygraphy_array decodes
// one of them.
//
// Encodings read (Polygraphy's polygraphy/json/serde.py and
// polygraphy/comparator/struct.py, all versions that write base64):
//   RunResults      {"lst": [[runner_name, [IterationResult, ...]], ...],
//                    "polygraphy_class": "RunResults"}
//                   or, before RunResults was a list, an object mapping each
//                   runner name to its list of IterationResults;
//   IterationResult {"outputs": {name: array, ...}, "runtime": x,
//                    "runner_name": r, "polygraphy_class": "IterationResult"}
//                   or, in the oldest files, the outputs as members of the
//                   object itself (every member holding an encoded array);
//   array           {"array": "<base64 of a .npy file>", "polygraphy_class": "ndarray"},
//                   with the legacy marker "__polygraphy_encoded_ndarray":
//                   "polygraphy_serialized_json_type" instead, or wrapped as
//                   {"values": array, "polygraphy_class": "LazyArray"} (or
//                   "LazyNumpyArray"); the string may also be the .npy bytes
//                   as latin-1 characters (the oldest files), which is what
//                   Polygraphy itself falls back to when base64 fails.
// Type markers are not required (files written by other tools omit them);
// other members are skipped. Refused: a non-object document, an output that
// holds no "array" string, the same output name twice in one iteration, an
// .npz-encoded array (older Polygraphy versions wrote np.savez; re-save it), and
// every JSON syntax error - each naming the file, the byte offset and, where
// known, the runner and output.
//
// Complexity: one pass over the file, O(size); memory O(runners + outputs).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/base64.hpp>
#include <numgap/io/json_span_reader.hpp>

namespace numgap::io {

struct polygraphy_output {
    std::string name;
    detail::json_span_reader::string_span encoded; // the "array" string's characters in the file
};
struct polygraphy_iteration {
    std::vector<polygraphy_output> outputs; // in file order
};
struct polygraphy_runner {
    std::string name;
    std::vector<polygraphy_iteration> iterations;
};
struct polygraphy_results {
    std::vector<polygraphy_runner> runners; // in file order
};

namespace detail {

inline bool is_polygraphy_marker(const std::string& key) {
    return key == "polygraphy_class" || key.starts_with("__polygraphy_encoded_");
}

// An encoded array at the reader's position, unwrapping LazyArray's "values";
// nullopt (the value consumed) when the value is no such object.
inline std::optional<json_span_reader::string_span> read_polygraphy_array(json_span_reader& reader, int wrappers = 0) {
    if (reader.peek() != '{') {
        reader.skip_value();
        return std::nullopt;
    }
    std::optional<json_span_reader::string_span> found;
    reader.read_object(
        [&](const std::string& key) {
            if (key == "array" && reader.peek() == '"') {
                found = reader.read_string_span();
            } else if (key == "values" && wrappers < 2) {
                if (auto inner = read_polygraphy_array(reader, wrappers + 1)) found = inner;
            } else {
                reader.skip_value();
            }
        },
        "an object");
    return found;
}

// `seen` holds the iteration's output names so far: a hash set keeps the
// duplicate check linear in a file with millions of tiny outputs.
inline void add_polygraphy_output(polygraphy_iteration& iteration, std::unordered_set<std::string>& seen,
                                  std::string name, json_span_reader::string_span encoded,
                                  const json_span_reader& reader, const std::string& runner) {
    if (!seen.insert(name).second)
        reader.fail_at("runner '" + runner + "' has output '" + name + "' twice in one iteration", encoded.begin);
    iteration.outputs.push_back({std::move(name), encoded});
}

inline polygraphy_iteration read_polygraphy_iteration(json_span_reader& reader, const std::string& runner) {
    polygraphy_iteration iteration;
    std::unordered_set<std::string> seen;
    reader.read_object(
        [&](const std::string& key) {
            if (key == "outputs") {
                reader.read_object(
                    [&](const std::string& name) {
                        const std::size_t at = reader.offset();
                        const auto encoded = read_polygraphy_array(reader);
                        if (!encoded)
                            reader.fail_at("output '" + name + "' of runner '" + runner +
                                               "' is not an encoded array (an object with an \"array\" string)",
                                           at);
                        add_polygraphy_output(iteration, seen, name, *encoded, reader, runner);
                    },
                    "the \"outputs\" object");
            } else if (key == "runtime" || key == "runner_name" || is_polygraphy_marker(key)) {
                reader.skip_value();
            } else if (const auto encoded = read_polygraphy_array(reader)) {
                add_polygraphy_output(iteration, seen, key, *encoded, reader, runner); // the oldest layout
            }
        },
        "an iteration result (an object)");
    return iteration;
}

inline std::vector<polygraphy_iteration> read_polygraphy_iterations(json_span_reader& reader, const std::string& runner) {
    std::vector<polygraphy_iteration> iterations;
    reader.read_array([&](std::size_t) { iterations.push_back(read_polygraphy_iteration(reader, runner)); },
                      "the list of iteration results of runner '" + runner + "'");
    return iterations;
}

} // namespace detail

inline polygraphy_results parse_polygraphy_results(std::span<const std::byte> text, std::string_view file) {
    detail::json_span_reader reader(text, file);
    polygraphy_results results;
    reader.read_object(
        [&](const std::string& key) {
            if (key == "lst") {
                reader.read_array(
                    [&](std::size_t) {
                        reader.expect('[', "a [runner name, iteration results] pair in \"lst\"");
                        polygraphy_runner runner;
                        runner.name = reader.read_string();
                        reader.expect(',', "',' after the runner name in \"lst\"");
                        runner.iterations = detail::read_polygraphy_iterations(reader, runner.name);
                        reader.expect(']', "']' closing the pair of runner '" + runner.name + "'");
                        results.runners.push_back(std::move(runner));
                    },
                    "the \"lst\" array of runners");
            } else if (!detail::is_polygraphy_marker(key) && reader.peek() == '[') {
                results.runners.push_back({key, detail::read_polygraphy_iterations(reader, key)});
            } else {
                reader.skip_value();
            }
        },
        "a Polygraphy RunResults object");
    reader.finish();
    if (results.runners.empty())
        reader.fail_at("no runner results (neither an \"lst\" list nor runner names mapped to iteration lists)", 0);
    return results;
}

// The bytes of the .npy file `output` encodes in `text` (the file it was
// parsed from), decoded into `storage` (replaced): at most 3/4 of the encoded
// length, so never more than the file can hold. `where` names the file, runner
// and output in errors.
inline std::span<const std::byte> decode_polygraphy_array(std::span<const std::byte> text, const polygraphy_output& output,
                                                          const std::string& file, const std::string& where,
                                                          std::unique_ptr<std::byte[]>& storage) {
    const auto& encoded = output.encoded;
    std::span<const std::byte> characters = text.subspan(encoded.begin, encoded.end - encoded.begin);
    std::string unescaped; // only for strings with escapes: rare, and small next to the file
    if (encoded.escaped) {
        unescaped = detail::json_span_reader(text, file).decode(encoded);
        characters = {reinterpret_cast<const std::byte*>(unescaped.data()), unescaped.size()};
    }
    const auto fail = [&](error_kind kind, const std::string& why, std::size_t at) {
        throw error(kind, where + ": " + why, error_location::at_offset(file, encoded.begin + at, output.name));
    };
    std::size_t size = 0;
    if (const std::optional<std::size_t> decoded = base64_decoded_size(characters)) {
        storage = std::make_unique_for_overwrite<std::byte[]>(*decoded);
        const auto failure = base64_decode(characters, {storage.get(), *decoded});
        if (!failure) size = *decoded;
        else if (!encoded.escaped)
            fail(error_kind::format,
                 "invalid base64 at character " + std::to_string(failure->offset) + " of the encoded array",
                 failure->offset);
    } else if (!encoded.escaped) {
        fail(error_kind::format,
             "invalid base64: " + std::to_string(characters.size()) + " characters, not a multiple of 4", 0);
    }
    if (size == 0 && encoded.escaped) {
        // The oldest files: .npy bytes as latin-1 characters (each code point one byte).
        storage = std::make_unique_for_overwrite<std::byte[]>(unescaped.size());
        for (std::size_t in = 0; in < unescaped.size(); ++in) {
            const auto lead = static_cast<unsigned char>(unescaped[in]);
            std::uint32_t code_point = lead;
            if (lead >= 0x80) {
                if (lead < 0xc2 || lead > 0xc3 || in + 1 >= unescaped.size())
                    fail(error_kind::format, "neither base64 nor latin-1 encoded (a character above U+00FF)", 0);
                code_point = (lead & 0x1fu) << 6 | (static_cast<unsigned char>(unescaped[++in]) & 0x3fu);
            }
            storage[size++] = std::byte(code_point);
        }
    }
    const std::span<const std::byte> bytes(storage.get(), size);
    if (size >= 2 && bytes[0] == std::byte('P') && bytes[1] == std::byte('K'))
        fail(error_kind::format,
             "holds an .npz-encoded array (written by an old Polygraphy); load and save it again with a current one", 0);
    return bytes;
}

} // namespace numgap::io
