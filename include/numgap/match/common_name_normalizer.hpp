#pragma once
// numgap::common_name_normalizer: a ready-made name normaliser for
// match_options::normalize_name that undoes the renamings exporters and
// backends commonly apply to tensor and node names:
//   - output-index suffixes: "_output_0", ":0", "@0", ".out0", "_out0";
//   - sanitised separators: '/', '.', ':', '-', ' ' all become '_', and runs
//     of '_' collapse ("layer1/conv" ~ "layer1.conv" ~ "layer1_conv");
//   - leading/trailing '_' are dropped;
//   - optionally (case_sensitive = false) letter case.
// Each rule can be turned off (strip_output_suffixes, unify_separators), so a
// caller such as the CLI's --name-rule picks exactly the rules it wants.
// It maps names; uniqueness is up to the graphs (two names that normalise to
// the same key make match_by_name throw, naming both).
// O(length of name); never throws except std::bad_alloc.
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

namespace numgap {

struct common_name_normalizer {
    bool case_sensitive = true;
    bool strip_output_suffixes = true;
    bool unify_separators = true;

    std::string operator()(std::string_view name) const {
        std::string key;
        key.reserve(name.size());
        append_to(name, key);
        return key;
    }

    // Appends the key of `name` to `out` (what operator() returns, without
    // a string of its own): match_by_name recognises this normaliser and
    // writes keys straight into its arena, one allocation fewer per node.
    void append_to(std::string_view name, std::string& out) const {
        if (strip_output_suffixes) name = strip_output_suffix(name);
        // The key is never longer than the name: size the buffer once and
        // write through a pointer (push_back per character re-checks the
        // capacity and rewrites the terminator; at a million names that
        // was most of the time spent here).
        const std::size_t start = out.size();
        out.resize(start + name.size());
        char* const first = out.data() + start;
        char* cursor = first;
        for (char c : name) {
            const bool separator =
                unify_separators && (c == '/' || c == '.' || c == ':' || c == '-' || c == ' ' || c == '_');
            if (separator) {
                if (cursor != first && cursor[-1] != '_') *cursor++ = '_';
            } else {
                *cursor++ = case_sensitive ? c : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            }
        }
        // Runs are collapsed, so at most one trailing '_' remains.
        if (unify_separators && cursor != first && cursor[-1] == '_') --cursor;
        out.resize(static_cast<std::size_t>(cursor - out.data()));
    }

private:
    // Drops one trailing "<marker><digits>" output-index suffix.
    static std::string_view strip_output_suffix(std::string_view name) {
        std::size_t digits = 0;
        while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[name.size() - 1 - digits])))
            ++digits;
        if (digits == 0) return name;
        const std::string_view head = name.substr(0, name.size() - digits);
        for (std::string_view marker : {std::string_view("_output_"), std::string_view(":"),
                                        std::string_view("@"), std::string_view(".out"),
                                        std::string_view("_out")}) {
            if (head.size() > marker.size() && head.ends_with(marker))
                return head.substr(0, head.size() - marker.size());
        }
        return name;
    }
};

} // namespace numgap
