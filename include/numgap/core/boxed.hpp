#pragma once
// numgap::boxed<T>: an optional T kept on the heap, 8 bytes whether it holds
// a value or not. For rarely set fields of structs that a run holds by the
// million (tensor_spec's block and axis_order, group_report's error detail):
// a std::optional<T> costs sizeof(T) in every instance, set or not, and each
// of those bytes is zeroed and paged in when the struct is made.
//
// It reads like std::optional: has_value(), explicit bool, *, ->, value(),
// reset(), emplace(), assignment from a T, a std::optional<T> or
// std::nullopt, and == (with another box, a T, or std::nullopt). Copies copy the
// value (a box is a value, not a shared handle); moves move the pointer.
// Complexity: O(1) plus T's own copy or construction. Throws: std::bad_alloc
// when a value is set or copied; value() on an empty box throws
// std::bad_optional_access.
#include <concepts>
#include <memory>
#include <optional>
#include <utility>

namespace numgap {

template <class T>
class boxed {
public:
    using value_type = T;

    boxed() noexcept = default;
    boxed(std::nullopt_t) noexcept {}
    boxed(T value) : value_(std::make_unique<T>(std::move(value))) {}
    boxed(const std::optional<T>& value) : value_(value ? std::make_unique<T>(*value) : nullptr) {}
    boxed(std::optional<T>&& value) : value_(value ? std::make_unique<T>(std::move(*value)) : nullptr) {}
    boxed(const boxed& other) : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
    boxed(boxed&&) noexcept = default;
    boxed& operator=(const boxed& other) {
        if (this != &other) value_ = other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
        return *this;
    }
    boxed& operator=(boxed&&) noexcept = default;
    ~boxed() = default;

    bool has_value() const noexcept { return value_ != nullptr; }
    explicit operator bool() const noexcept { return has_value(); }

    T& operator*() noexcept { return *value_; }
    const T& operator*() const noexcept { return *value_; }
    T* operator->() noexcept { return value_.get(); }
    const T* operator->() const noexcept { return value_.get(); }
    T& value() {
        if (!value_) throw std::bad_optional_access();
        return *value_;
    }
    const T& value() const {
        if (!value_) throw std::bad_optional_access();
        return *value_;
    }
    // The value as a std::optional (a copy), for code that takes one.
    std::optional<T> as_optional() const { return value_ ? std::optional<T>(*value_) : std::nullopt; }

    void reset() noexcept { value_.reset(); }
    template <class... Args>
    T& emplace(Args&&... args) {
        value_ = std::make_unique<T>(std::forward<Args>(args)...);
        return *value_;
    }

    friend bool operator==(const boxed& a, std::nullopt_t) noexcept { return !a.has_value(); }
    friend bool operator==(const boxed& a, const boxed& b) requires std::equality_comparable<T> {
        return a.has_value() == b.has_value() && (!a.has_value() || *a == *b);
    }
    friend bool operator==(const boxed& a, const T& b) requires std::equality_comparable<T> {
        return a.has_value() && *a == b;
    }

private:
    std::unique_ptr<T> value_;
};

} // namespace numgap
