#pragma once
// numgap::io::npz_source: an .npz archive given as the run (detected by the
// zip signature "PK\3\4" or "PK\5\6", or by the .npz extension so that a
// damaged archive is reported by the zip reader). Every member "<key>.npy" is
// the tensor <key>; other members are ignored. Stored members are mapped in
// place; deflated ones are inflated into an owned buffer after their .npy
// header has been checked against the member's declared size (a bomb costs
// the first bytes of its stream, not its claimed size; limits in npz.hpp and
// read_policy.hpp). No graph of its own; an overlay graph.json may give one
// (run_overlay.hpp).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/loaded_tensor.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/npz.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_source.hpp>

namespace numgap::io {

class npz_source final : public run_source {
public:
    explicit npz_source(std::shared_ptr<const npz_archive> archive) : archive_(std::move(archive)) {}

    loaded_tensor load(const tensor_spec& spec) const override {
        std::unique_ptr<detail::loaded_tensor_state> state = detail::start_loading(spec, spec.file);
        state->mapping = archive_->mapping();
        const npz_member* member = archive_->find(spec.file);
        NUMGAP_ASSERT(member != nullptr);
        const std::string where = archive_->describe(*member);
        if (member->method != 0) {
            std::vector<std::byte> prefix(12);
            const std::uint64_t preamble = npy_preamble_size(archive_->member_prefix(*member, prefix));
            prefix.resize(std::size_t(std::clamp<std::uint64_t>(preamble, prefix.size(), detail::npy_header_read_limit)));
            const std::span<const std::byte> head = archive_->member_prefix(*member, prefix);
            const npy_header header = parse_npy_header(head, member->uncompressed_size, where, spec.type);
            detail::check_declared_shape(spec, header.shape, where);
        }
        const std::span<const std::byte> bytes = archive_->member_bytes(*member, state->buffer);
        if (state->buffer != nullptr) archive_->mapping()->check_intact(); // what was inflated was the file's
        state->view = npy_view(bytes, parse_npy_header(bytes, where, spec.type));
        detail::finish_loaded_tensor(spec, *state, where);
        return loaded_tensor(std::move(state));
    }

    // Deflated members inflate only their header's bytes.
    std::optional<std::vector<std::int64_t>> stored_shape(const tensor_spec& spec) const override {
        const npz_member* member = archive_->find(spec.file);
        if (member == nullptr) return std::nullopt;
        try {
            const std::optional<npy_header> header = detail::read_npy_header(
                [&](std::span<std::byte> prefix) { return archive_->member_prefix(*member, prefix); },
                member->uncompressed_size, archive_->describe(*member), spec.type);
            if (!header) return std::nullopt;
            return header->shape;
        } catch (const error&) {
            return std::nullopt;
        }
    }

    void release_cached_pages() const noexcept override {
        if (archive_->mapping()) archive_->mapping()->release_all_pages();
    }
    std::string missing_reason(std::string_view key, const run_manifest&) const override {
        return "no member '" + std::string(key) + ".npy'";
    }

private:
    std::shared_ptr<const npz_archive> archive_;
};

inline opened_run_source open_npz(const std::filesystem::path& path, const read_policy& policy) {
    auto archive = std::make_shared<const npz_archive>(npz_archive::open(path, policy.max_inflated_bytes));
    opened_run_source opened;
    std::vector<tensor_spec> discovered;
    for (const npz_member& member : archive->members()) {
        const std::string_view name = member.name;
        if (name.size() <= 4 || name.substr(name.size() - 4) != ".npy") continue;
        tensor_spec spec;
        spec.key = std::string(name.substr(0, name.size() - 4));
        spec.file = member.name;
        discovered.push_back(std::move(spec));
        opened.total_bytes += member.uncompressed_size;
    }
    detail::merge_specs(opened.manifest, std::move(discovered));
    opened.source = std::make_shared<const npz_source>(std::move(archive));
    return opened;
}

} // namespace numgap::io
