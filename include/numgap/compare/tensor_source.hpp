#pragma once
// tensor_source: what compare_runs reads tensors from, as a concept.
//
// Three shapes are accepted, so neither the run-directory reader nor a user's
// in-memory buffers need wrapping:
//   keyed:    `source.contains(key)` and `source.load(key)` returning an object
//             with `.view()` (io::run_directory: the object owns the mapping,
//             and is dropped as soon as the pair is compared); one that
//             also has `try_load(key)` (nullopt when absent) is asked once
//             instead of twice;
//   mapped:   `source.find(key)` / `source.end()` with `it->second`
//             convertible to tensor_view (std::map / std::unordered_map of
//             views over the user's memory);
//   callable: `source(key)` returning std::optional<tensor_view> (nullopt:
//             not dumped).
// Thread safety: compare_runs calls contains/load/find/operator() from several
// worker threads at once (only when compare_options::threads > 1); sources
// must allow concurrent const-like calls. Views must stay valid while the
// holder fetch_tensor returns is alive.
// Complexity: O(1) beyond the source's own lookup. Throws: whatever the source
// throws (numgap::error for bad data, by numgap's convention).
#include <concepts>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include <numgap/core/segmented_view.hpp>
#include <numgap/core/tensor_view.hpp>

namespace numgap {

template <class S>
concept keyed_tensor_source = requires(S& source, const std::string& key) {
    { source.contains(key) } -> std::convertible_to<bool>;
    { source.load(key).view() } -> std::convertible_to<tensor_view>;
};

template <class S>
concept mapped_tensor_source = requires(S& source, const std::string& key) {
    source.find(key) != source.end();
    { source.find(key)->second } -> std::convertible_to<tensor_view>;
};

template <class S>
concept callable_tensor_source = requires(S& source, const std::string& key) {
    { source(key) } -> std::convertible_to<std::optional<tensor_view>>;
};

template <class S>
concept tensor_source =
    keyed_tensor_source<S> || mapped_tensor_source<S> || callable_tensor_source<S>;

namespace detail {
template <class S> struct tensor_holder {
    using type = tensor_view;
};
template <keyed_tensor_source S> struct tensor_holder<S> {
    using type = std::remove_cvref_t<decltype(std::declval<S&>().load(std::declval<const std::string&>()))>;
};

inline tensor_view view_of(const tensor_view& view) { return view; }
template <class Holder>
    requires requires(const Holder& holder) { holder.view(); }
tensor_view view_of(const Holder& holder) {
    return holder.view();
}
// The segments of a fetched tensor: a sharded io::loaded_tensor's (graph.json
// "shards"), else the one segment `whole` - which the caller keeps alive -
// over its view.
template <class Holder>
segmented_view segments_of(const Holder& holder, tensor_segment& whole) {
    if constexpr (requires { holder.is_sharded(); holder.segments(); })
        if (holder.is_sharded()) return holder.segments();
    whole = {view_of(holder), 0};
    return {std::span<const tensor_segment>(&whole, 1), 0};
}
} // namespace detail

// Whether the source holds a tensor under `key`, without loading it. A
// callable source can only answer by loading, so it is taken to hold every
// key (the caller uses this to count what was not compared: erring towards
// "held" makes that count larger, never hides a gap).
template <tensor_source S>
bool holds_tensor(S& source, const std::string& key) {
    if constexpr (keyed_tensor_source<S>) {
        return static_cast<bool>(source.contains(key));
    } else if constexpr (mapped_tensor_source<S>) {
        return source.find(key) != source.end();
    } else {
        return true;
    }
}

// The tensor stored under `key` (kept alive by the returned holder), or
// nullopt when the source does not have it.
template <tensor_source S>
std::optional<typename detail::tensor_holder<S>::type> fetch_tensor(S& source, const std::string& key) {
    using holder = typename detail::tensor_holder<S>::type;
    if constexpr (keyed_tensor_source<S> && requires { source.try_load(key); }) {
        return source.try_load(key); // one key lookup instead of contains() and load()
    } else if constexpr (keyed_tensor_source<S>) {
        if (!source.contains(key)) return std::nullopt;
        std::optional<holder> held;
        held.emplace(source.load(key));
        return held;
    } else if constexpr (mapped_tensor_source<S>) {
        const auto found = source.find(key);
        if (found == source.end()) return std::nullopt;
        return holder(found->second);
    } else {
        std::optional<tensor_view> view = source(key);
        return view;
    }
}

// fetch_tensor for the tensor compared with `reference`: a keyed source that
// can infer what its files do not say from the reference (`load_like(key,
// reference)`, io::run_directory over a QNN raw output folder) is asked so;
// any other source is read as fetch_tensor reads it.
template <tensor_source S>
std::optional<typename detail::tensor_holder<S>::type> fetch_tensor_like(S& source, const std::string& key,
                                                                         const tensor_view& reference) {
    if constexpr (keyed_tensor_source<S> && requires { source.try_load_like(key, reference); }) {
        return source.try_load_like(key, reference);
    } else if constexpr (keyed_tensor_source<S> && requires { source.load_like(key, reference); }) {
        if (!source.contains(key)) return std::nullopt;
        std::optional<typename detail::tensor_holder<S>::type> held;
        held.emplace(source.load_like(key, reference));
        return held;
    } else {
        return fetch_tensor(source, key);
    }
}

} // namespace numgap
