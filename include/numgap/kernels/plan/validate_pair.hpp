#pragma once
// validate_view / validate_pair: the single API-boundary check before any
// kernel runs. Rejects, with a numgap::error naming the tensor(s) and the
// reason: unknown dtypes, null data, data not aligned for its dtype (typed
// loads from it would be undefined behaviour: io::run_directory copies such
// data, a caller building a view over raw bytes must too), empty tensors, an
// axis_order that is not a
// permutation, quantization on a dtype that is neither an integer nor an MX
// element format (core/dtype.hpp's is_mx_element; those take block scales
// only, without zero points, and NaN block scales: a NaN block), a zero or
// non-finite scale,
// a per-channel axis out of range or whose parameter count differs from the
// axis length, a packed 4-bit (int4, uint4, float4_e2m1fn) view that is not contiguous, block quantization
// with an axis out of range, a parameter count other than
// outer * ceil(axis length / block size) * inner (core/quantization.hpp), a
// zero point beyond +-2^24 (q - zero_point must be exact in float32), or a
// layout other than contiguous storage without axis_order; and for pairs, shapes (after axis_order) that differ, and
// comparing bool with a non-bool dtype (a mask against numbers is a matching
// mistake, not a numerical difference).
// Complexity: O(rank + quantization parameters), the parameters scanned
// branch-free (parameter_scan.hpp). Throws: numgap::error.
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/plan/parameter_scan.hpp>

namespace numgap {

namespace detail {

template <class Values>
std::string format_list(const Values& values) {
    std::string text = "[";
    bool first = true;
    for (const auto value : values) {
        if (!first) text += ", ";
        text += std::to_string(std::int64_t(value));
        first = false;
    }
    return text + "]";
}

// Shapes in reference order; without axis orders the stored shapes, compared
// where they lie (copying both logical shapes cost ~10 ns a call).
inline bool same_logical_shape(const tensor_view& reference, const tensor_view& target) noexcept {
    if (reference.rank() != target.rank()) return false;
    if (!reference.has_axis_order() && !target.has_axis_order()) {
        for (int d = 0; d < reference.rank(); ++d)
            if (reference.shape(d) != target.shape(d)) return false;
        return true;
    }
    const auto reference_shape = reference.logical_shape();
    const auto target_shape = target.logical_shape();
    for (int d = 0; d < reference.rank(); ++d)
        if (reference_shape[std::size_t(d)] != target_shape[std::size_t(d)]) return false;
    return true;
}

// validate_view checks alignment with a mask.
static_assert([] {
    for (const dtype type : all_dtypes)
        if (!std::has_single_bit(size_of(type))) return false;
    return true;
}());

// One bit per dtype code: a test, not a search (this runs on every call).
static_assert(
    [] {
        for (const dtype type : all_dtypes)
            if (unsigned(type) >= 64) return false;
        return true;
    }(),
    "known_dtype_bits holds dtype codes below 64; a larger code needs a wider set.");
inline constexpr std::uint64_t known_dtype_bits = [] {
    std::uint64_t bits = 0;
    for (const dtype type : all_dtypes) bits |= std::uint64_t(1) << unsigned(type);
    return bits;
}();

inline bool known_dtype(dtype type) noexcept {
    return unsigned(type) < 64 && ((known_dtype_bits >> unsigned(type)) & 1) != 0;
}

// The block-quantization checks of validate_view (core/quantization.hpp).
template <class Who, class Where>
void validate_blocks(const tensor_view& view, const Who& who_text, const Where& where) {
    const quantization& q = view.quant();
    const int axis = resolved_axis(q.axis, view.rank());
    const auto fail = [&](error_kind kind, const std::string& reason) {
        throw error(kind, who_text() + " has block quantization " + reason, where());
    };
    if (axis < 0 || axis >= view.rank())
        fail(error_kind::shape, "along axis " + std::to_string(q.axis) + ", out of range for rank " +
                                    std::to_string(view.rank()));
    if (!view.is_contiguous() || view.has_axis_order())
        fail(error_kind::shape, "but is not stored contiguously in its own dimension order (strides " +
                                    format_list(view.strides()) +
                                    (view.has_axis_order() ? ", with an axis_order" : "") +
                                    "); block scales are laid out over contiguous storage");
    const std::int64_t length = view.shape(axis);
    const std::int64_t blocks_per_row = length / q.block_size + (length % q.block_size != 0 ? 1 : 0);
    const std::int64_t expected = *block_parameter_count(view.shape(), axis, q.block_size);
    const auto layout = [&] {
        return "of " + std::to_string(q.block_size) + " along axis " + std::to_string(q.axis) + " (length " +
               std::to_string(length) + ": " + std::to_string(blocks_per_row) + " block(s) per row, " +
               std::to_string(expected) + " in all)";
    };
    if (std::int64_t(q.scales.size()) != expected)
        fail(error_kind::shape, layout() + " with " + std::to_string(q.scales.size()) + " scales; it needs " +
                                    std::to_string(expected) + ", one per block");
    if (!q.zero_points.empty() && std::int64_t(q.zero_points.size()) != expected)
        fail(error_kind::shape, layout() + " with " + std::to_string(q.zero_points.size()) +
                                    " zero points; it needs none or " + std::to_string(expected));
    const std::size_t b = first_zero_point_beyond(q.zero_points, 1 << 24);
    if (b != q.zero_points.size())
        fail(error_kind::schema, "with zero point[" + std::to_string(b) + "] " + std::to_string(q.zero_points[b]) +
                                     ", beyond +-2^24 (q - zero_point would not be exact in float32)");
}

// Whether validate_view would accept `view` at once: a known dtype, elements,
// data aligned for it, no quantization or axis_order, packed types
// contiguous. The common case, checked without the frame the messages need.
inline bool plainly_valid(const tensor_view& view) noexcept {
    return known_dtype(view.type()) && view.size() != 0 && view.data() != nullptr &&
           (reinterpret_cast<std::uintptr_t>(view.data()) & (size_of(view.type()) - 1)) == 0 && !view.is_quantized() &&
           !view.has_axis_order() && (!is_packed(view.type()) || view.is_contiguous());
}

// Everything validate_view checks, throwing on the first failure.
inline void validate_view_fully(const tensor_view& view, std::string_view role);

} // namespace detail

// role: "reference", "target" or "" (single view), used in the messages.
// Views that are plainly valid return at once; others take the full check,
// a function of its own (large: GCC 12 keeps it out of line). Inlined here,
// the frame its messages need was set up on every call (~8 ns of a 0.11 us
// evaluate() at 2^10 elements, AMD Zen 5).
inline void validate_view(const tensor_view& view, std::string_view role = {}) {
    if (!detail::plainly_valid(view)) [[unlikely]]
        detail::validate_view_fully(view, role);
}

inline void detail::validate_view_fully(const tensor_view& view, std::string_view role) {
    // Built only when an error is thrown: this runs on every evaluate() call
    // with a quantized or axis-ordered view.
    const auto who_text = [&] { return (role.empty() ? std::string() : std::string(role) + " ") + view.describe(); };
    const auto where = [&] { return error_location::of_item(std::string(view.name())); };
    if (!detail::known_dtype(view.type()))
        throw error(error_kind::dtype, who_text() + " has an unknown dtype code " + std::to_string(int(view.type())),
                    where());
    if (view.size() == 0)
        throw error(error_kind::shape,
                    who_text() + " is empty (shape " + detail::format_list(view.shape()) + "); there is nothing to compare",
                    where());
    if (view.data() == nullptr) throw error(error_kind::usage, who_text() + " has no data (null pointer)", where());
    // Storage units are 1, 2, 4 or 8 bytes: a mask, not a division (~10 ns a call).
    if ((reinterpret_cast<std::uintptr_t>(view.data()) & (size_of(view.type()) - 1)) != 0)
        throw error(error_kind::usage,
                    who_text() + " has data at an address not aligned for " + std::string(name_of(view.type())) +
                        " (" + std::to_string(size_of(view.type())) + " bytes); copy it into aligned storage first",
                    where());
    if (is_packed(view.type()) && !view.is_contiguous())
        throw error(error_kind::shape,
                    who_text() + " is " + std::string(name_of(view.type())) +
                        " with strides " + detail::format_list(view.strides()) + " for shape " +
                        detail::format_list(view.shape()) +
                        "; packed 4-bit tensors must be stored contiguously (two elements per byte)",
                    where());
    if (view.has_axis_order()) {
        bool seen[max_rank] = {};
        for (const std::int8_t axis : view.axis_order()) {
            if (axis < 0 || axis >= view.rank() || seen[axis])
                throw error(error_kind::shape,
                            who_text() + " has axis_order " + detail::format_list(view.axis_order()) +
                                ", which is not a permutation of 0.." + std::to_string(view.rank() - 1),
                            where());
            seen[axis] = true;
        }
    }
    if (!view.is_quantized()) return;
    const quantization& q = view.quant();
    const bool mx_element = is_mx_element(view.type());
    if (!is_integer(view.type()) && !mx_element)
        throw error(error_kind::dtype,
                    who_text() + " carries quantization parameters but has dtype " +
                        std::string(name_of(view.type())) +
                        "; only integer dtypes and the MX element formats (float8 e4m3fn / e5m2, float6, float4) "
                        "can be quantized",
                    where());
    if (mx_element && (!q.per_block() || !q.zero_points.empty()))
        throw error(error_kind::schema,
                    who_text() + " is " + std::string(name_of(view.type())) +
                        (q.per_block() ? " with block zero points" : " with per-tensor or per-channel quantization") +
                        "; an MX element format takes block scales only (value = scale * decode(code))",
                    where());
    auto check_scale = [&](float scale, const std::string& label) {
        if (!std::isfinite(scale) || scale == 0.0f)
            throw error(error_kind::schema,
                        who_text() + " has quantization " + label + " " + std::to_string(scale) +
                            "; a scale must be finite and non-zero",
                        where());
    };
    if (q.block_size < 0 || (!q.per_block() && !q.per_channel() && !q.zero_points.empty()))
        throw error(error_kind::schema,
                    who_text() + " has block size " + std::to_string(q.block_size) + " and " +
                        std::to_string(q.zero_points.size()) +
                        " zero points without scales; blocks need a positive size and per-channel parameters need "
                        "scales",
                    where());
    if (q.per_block()) {
        detail::validate_blocks(view, who_text, where);
        // An MX block's NaN scale (e8m0 0xFF) makes the block NaN (OCP MX v1.0).
        const std::size_t b = detail::first_invalid_scale(q.scales, mx_element);
        if (b != q.scales.size()) check_scale(q.scales[b], "block scale[" + std::to_string(b) + "]");
        return;
    }
    if (!q.per_channel()) {
        check_scale(q.scale, "scale");
        return;
    }
    if (q.axis < 0 || q.axis >= view.rank())
        throw error(error_kind::shape,
                    who_text() + " has per-channel quantization along axis " + std::to_string(q.axis) +
                        ", out of range for rank " + std::to_string(view.rank()),
                    where());
    const std::int64_t channels = view.shape(q.axis);
    if (std::int64_t(q.scales.size()) != channels)
        throw error(error_kind::shape,
                    who_text() + " has per-channel quantization along axis " + std::to_string(q.axis) + " with " +
                        std::to_string(q.scales.size()) + " scales, but that axis has " + std::to_string(channels) +
                        " elements",
                    where());
    if (!q.zero_points.empty() && std::int64_t(q.zero_points.size()) != channels)
        throw error(error_kind::shape,
                    who_text() + " has per-channel quantization along axis " + std::to_string(q.axis) + " with " +
                        std::to_string(q.zero_points.size()) + " zero points, but that axis has " +
                        std::to_string(channels) + " elements",
                    where());
    const std::size_t c = detail::first_invalid_scale(q.scales, false);
    if (c != q.scales.size()) check_scale(q.scales[c], "scale[" + std::to_string(c) + "]");
}

namespace detail {

// validate_pair's failures, out of line like validate_view_fully.
[[noreturn]] inline void throw_shape_mismatch(const tensor_view& reference, const tensor_view& target) {
    const auto reference_shape = reference.logical_shape();
    const auto target_shape = target.logical_shape();
    auto logical = [](const tensor_view& view, const std::array<std::int64_t, max_rank>& shape) {
        std::string text = detail::format_list(std::span<const std::int64_t>(shape.data(), std::size_t(view.rank())));
        if (view.has_axis_order())
            text += " (stored " + detail::format_list(view.shape()) + " with axis_order " +
                    detail::format_list(view.axis_order()) + ")";
        return text;
    };
    throw error(error_kind::shape,
                "reference " + reference.describe() + " has shape " + logical(reference, reference_shape) +
                    " but target " + target.describe() + " has shape " + logical(target, target_shape) +
                    " in reference order (" + std::to_string(reference.size()) + " vs " +
                    std::to_string(target.size()) + " elements)",
                error_location::of_item(std::string(reference.name())));
}

[[noreturn]] inline void throw_bool_against_numbers(const tensor_view& reference, const tensor_view& target) {
    throw error(error_kind::dtype,
                "cannot compare reference " + reference.describe() + " (" + std::string(name_of(reference.type())) +
                    ") with target " + target.describe() + " (" + std::string(name_of(target.type())) +
                    "): a bool tensor can only be compared with another bool tensor",
                error_location::of_item(std::string(reference.name())));
}

} // namespace detail

inline void validate_pair(const tensor_view& reference, const tensor_view& target) {
    validate_view(reference, "reference");
    validate_view(target, "target");
    if (!detail::same_logical_shape(reference, target)) [[unlikely]]
        detail::throw_shape_mismatch(reference, target);
    if ((reference.type() == dtype::boolean) != (target.type() == dtype::boolean)) [[unlikely]]
        detail::throw_bool_against_numbers(reference, target);
}

} // namespace numgap
