#pragma once
// numgap::io::inflate: a decoder for raw DEFLATE streams (RFC 1951), as used
// by zip method 8 and so by np.savez_compressed.
//
// Why not zlib: numgap depends on the standard library, xtensor and xsimd only.
// All three block types are handled (stored, fixed and dynamic Huffman).
// Huffman codes of up to 10 bits (nearly all symbols) decode with one table
// lookup; longer ones walk the canonical code. Tables are rebuilt per dynamic
// block (1024 entries each, small next to the ~16K symbols zlib puts in one).
//
// Strictness: the output size must be known up front (zip stores it) and the
// stream must produce exactly that many bytes - more is refused as soon as it
// happens (no decompression bombs), fewer is an error at the end. Every read
// is bounds checked: a stream that runs out of input, over-subscribed or
// incomplete codes (except the single one-bit code RFC 1951 allows), invalid
// block type 3, unused length/distance symbols, a distance before the start
// of the output, and a stored block whose LEN/NLEN disagree are all errors.
// Bytes after the final block are ignored (they cannot change the output).
// inflate_prefix() decodes only the first bytes of a stream (corrupt or
// missing data after them is no error), e.g. a header to validate before
// allocating the output.
//
// Complexity: O(input + output + 2^15 per Huffman table built). Memory: the
// output plus a few KiB of tables. Throws numgap::error that starts with
// `source` (e.g. "archive 'run.npz', member 'x.npy'") and says what is wrong and
// at which compressed byte; its kind is format and its where() is `stream`
// (file and member) with the offset of that compressed byte - counted from the
// start of the file when `stream` gives the stream's own offset in it, else
// from the start of the stream.
//
// Longer than ~350 lines: one decoder class whose bit reader, Huffman tables
// and block loop share state; split over files it would be harder to follow.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>

namespace numgap::io {

// What a stream contained; lets tests prove a fixture exercises each block type.
struct inflate_stats {
    std::size_t stored_blocks = 0;
    std::size_t fixed_blocks = 0;
    std::size_t dynamic_blocks = 0;
    std::size_t long_code_symbols = 0; // decoded through the slow path (codes over 10 bits)
};

namespace detail {

class inflater {
public:
    // Whether `output` is the whole stream's output (it must fill it exactly) or
    // only the first bytes wanted (decoding stops, without error, once it is full).
    enum class extent { whole, prefix };
    // Thrown (and caught by inflate_prefix) when a prefix is full.
    struct prefix_full {};

    inflater(std::span<const std::byte> input, std::span<std::byte> output, std::string_view source,
             extent wanted = extent::whole, error_location stream = {})
        : input_(reinterpret_cast<const std::uint8_t*>(input.data())), input_size_(input.size()),
          output_(output.data()), output_size_(output.size()), source_(source), stream_(std::move(stream)),
          tables_(std::make_unique<tables>()), prefix_only_(wanted == extent::prefix) {}

    std::size_t produced() const noexcept { return output_position_; }

    void run(inflate_stats& stats) {
        stats_ = &stats;
        bool final_block = false;
        while (!final_block) {
            stop_if_prefix_full();
            final_block = take(1) != 0;
            switch (take(2)) {
            case 0:
                ++stats.stored_blocks;
                stored_block();
                break;
            case 1:
                ++stats.fixed_blocks;
                fixed_block();
                break;
            case 2:
                ++stats.dynamic_blocks;
                dynamic_block();
                break;
            default: fail("invalid block type 3");
            }
        }
        if (!prefix_only_ && output_position_ != output_size_)
            fail("the stream ends after " + std::to_string(output_position_) + " bytes but " +
                 std::to_string(output_size_) + " were expected");
    }

private:
    static constexpr int max_bits = 15;
    static constexpr int fast_bits = 10;
    static constexpr std::size_t fast_size = std::size_t(1) << fast_bits;
    // Codes of up to fast_bits bits decode with one lookup (entry = symbol << 4 |
    // length, 0 when the pattern starts a longer code or no code); longer, rare
    // codes fall back to a canonical walk over count/symbol. Rebuilding costs
    // 2^fast_bits entries per code, not 2^15, which matters at ~16K symbols a block.
    struct huffman_table {
        std::array<std::uint16_t, fast_size> fast{};
        std::array<std::uint16_t, max_bits + 1> count{};
        std::array<std::uint16_t, 288 + 32> symbol{}; // symbols ordered by code
    };
    struct tables {
        huffman_table literal, distance, code_length;
    };

    [[noreturn]] void fail(const std::string& reason) const {
        // With a full prefix, whatever follows it is none of the caller's business:
        // checked here, on the error path, so decoding pays nothing per symbol.
        stop_if_prefix_full();
        const std::size_t consumed_bits = next_byte_ * 8 - std::size_t(bit_count_);
        const std::size_t byte = std::min(consumed_bits / 8, input_size_);
        error_location where = stream_;
        where.offset = (stream_.has_offset() ? stream_.offset : 0) + byte;
        throw error(error_kind::format,
                    std::string(source_) + ": corrupt deflate data: " + reason + " (at compressed byte " +
                        std::to_string(byte) + " of " + std::to_string(input_size_) + ")",
                    std::move(where));
    }

    // Bytes past the end read as zero; check_input() turns their use into an error.
    void refill() noexcept {
        if (bit_count_ <= 56 && input_size_ - std::min(next_byte_, input_size_) >= 8) {
            // Eight bytes at once; bits above bit_count_ are the next bytes of the
            // stream, so loading them again on a later refill ORs in identical bits.
            std::uint64_t word;
            std::memcpy(&word, input_ + next_byte_, 8);
            bits_ |= word << bit_count_;
            next_byte_ += std::size_t(63 - bit_count_) >> 3;
            bit_count_ |= 56;
            return;
        }
        while (bit_count_ <= 56) {
            const std::uint64_t byte = next_byte_ < input_size_ ? input_[next_byte_] : 0;
            ++next_byte_;
            bits_ |= byte << bit_count_;
            bit_count_ += 8;
        }
    }
    void check_input() const {
        if (next_byte_ * 8 - std::size_t(bit_count_) > input_size_ * 8)
            fail("the compressed data ends in the middle of a block");
    }
    std::uint32_t take(int count) {
        refill();
        const std::uint32_t value = static_cast<std::uint32_t>(bits_ & ((std::uint64_t(1) << count) - 1));
        bits_ >>= count;
        bit_count_ -= count;
        check_input();
        return value;
    }
    unsigned decode(const huffman_table& table, const char* what) {
        refill();
        const std::uint16_t entry = table.fast[bits_ & (fast_size - 1)];
        if (entry != 0) {
            const int length = entry & 15;
            bits_ >>= length;
            bit_count_ -= length;
            check_input();
            return entry >> 4;
        }
        // Canonical decoding one bit at a time (RFC 1951 3.2.2; as in zlib's puff.c).
        std::uint64_t pending = bits_;
        int code = 0, first = 0, index = 0;
        for (int length = 1; length <= max_bits; ++length) {
            code |= int(pending & 1u);
            pending >>= 1;
            const int count = table.count[std::size_t(length)];
            if (code - first < count) {
                ++stats_->long_code_symbols;
                bits_ >>= length;
                bit_count_ -= length;
                check_input();
                return table.symbol[std::size_t(index + code - first)];
            }
            index += count;
            first = (first + count) << 1;
            code <<= 1;
        }
        fail(std::string("a bit pattern that is no ") + what + " code");
    }

    // How much of the code space a set of lengths must use: dynamic code-length
    // codes must be complete; dynamic literal and distance codes may be
    // incomplete only as one one-bit code or no code at all (RFC 1951 3.2.7).
    enum class coverage { complete, single_code_allowed };

    // Canonical Huffman code from code lengths (RFC 1951 3.2.2).
    void build(huffman_table& table, const std::uint8_t* lengths, std::size_t count, coverage rule,
               const char* what) {
        std::array<int, max_bits + 1> per_length{};
        for (std::size_t symbol = 0; symbol < count; ++symbol) ++per_length[lengths[symbol]];
        int left = 1;
        for (int length = 1; length <= max_bits; ++length) {
            left = (left << 1) - per_length[length];
            if (left < 0) fail(std::string("over-subscribed ") + what + " code");
        }
        const int used = int(count) - per_length[0];
        if (left > 0) {
            const bool single_or_none = used == 0 || (used == 1 && per_length[1] == 1);
            if (rule == coverage::complete || !single_or_none)
                fail(std::string("incomplete ") + what + " code");
        }
        std::array<std::uint16_t, max_bits + 2> offset{};
        for (int length = 1; length <= max_bits; ++length) {
            table.count[std::size_t(length)] = std::uint16_t(per_length[length]);
            offset[std::size_t(length) + 1] = std::uint16_t(offset[std::size_t(length)] + per_length[length]);
        }
        std::array<std::uint32_t, max_bits + 1> next_code{};
        std::uint32_t code = 0;
        for (int length = 2; length <= max_bits; ++length) {
            code = (code + std::uint32_t(per_length[length - 1])) << 1;
            next_code[length] = code;
        }
        table.fast.fill(0);
        for (std::size_t symbol = 0; symbol < count; ++symbol) {
            const int length = lengths[symbol];
            if (length == 0) continue;
            table.symbol[offset[std::size_t(length)]++] = std::uint16_t(symbol);
            std::uint32_t canonical = next_code[length]++;
            if (length > fast_bits) continue;
            std::uint32_t reversed = 0;
            for (int bit = 0; bit < length; ++bit, canonical >>= 1) reversed = (reversed << 1) | (canonical & 1);
            const auto entry = static_cast<std::uint16_t>(symbol << 4 | std::size_t(length));
            for (std::size_t slot = reversed; slot < fast_size; slot += std::size_t(1) << length)
                table.fast[slot] = entry;
        }
    }

    void stored_block() {
        bits_ >>= bit_count_ % 8; // skip to the byte boundary
        bit_count_ -= bit_count_ % 8;
        const std::uint32_t length = take(16);
        const std::uint32_t complement = take(16);
        if ((length ^ 0xffffu) != complement) fail("stored block length does not match its complement");
        const std::size_t position = next_byte_ - std::size_t(bit_count_ / 8);
        if (length > input_size_ - position) fail("a stored block runs past the end of the compressed data");
        const bool fills_prefix = length > output_size_ - output_position_;
        if (fills_prefix && !prefix_only_) too_long();
        const std::size_t kept = std::min<std::size_t>(length, output_size_ - output_position_);
        if (kept != 0) std::memcpy(output_ + output_position_, input_ + position, kept);
        output_position_ += kept;
        if (fills_prefix) throw prefix_full{};
        next_byte_ = position + length;
        bits_ = 0;
        bit_count_ = 0;
    }

    void fixed_block() {
        if (!fixed_built_) {
            // All 32 distance patterns get a code so that the unused symbols 30 and 31
            // are reported as such rather than as unknown bit patterns.
            std::array<std::uint8_t, 288 + 32> lengths{};
            std::fill(lengths.begin(), lengths.begin() + 144, 8);
            std::fill(lengths.begin() + 144, lengths.begin() + 256, 9);
            std::fill(lengths.begin() + 256, lengths.begin() + 280, 7);
            std::fill(lengths.begin() + 280, lengths.begin() + 288, 8);
            std::fill(lengths.begin() + 288, lengths.end(), 5);
            build(fixed_literal_, lengths.data(), 288, coverage::complete, "literal/length");
            build(fixed_distance_, lengths.data() + 288, 32, coverage::complete, "distance");
            fixed_built_ = true;
        }
        codes(fixed_literal_, fixed_distance_);
    }

    void dynamic_block() {
        const unsigned literal_count = take(5) + 257;
        const unsigned distance_count = take(5) + 1;
        const unsigned code_length_count = take(4) + 4;
        if (literal_count > 286) fail("dynamic block declares more than 286 literal/length codes");
        if (distance_count > 30) fail("dynamic block declares more than 30 distance codes");
        static constexpr std::uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
        std::array<std::uint8_t, 19> code_lengths{};
        for (unsigned i = 0; i < code_length_count; ++i) code_lengths[order[i]] = std::uint8_t(take(3));
        build(tables_->code_length, code_lengths.data(), 19, coverage::complete, "code length");

        std::array<std::uint8_t, 286 + 30> lengths{};
        const unsigned total = literal_count + distance_count;
        for (unsigned i = 0; i < total;) {
            const unsigned symbol = decode(tables_->code_length, "code length");
            if (symbol < 16) {
                lengths[i++] = std::uint8_t(symbol);
                continue;
            }
            std::uint8_t value = 0;
            unsigned repeat = 0;
            if (symbol == 16) {
                if (i == 0) fail("a repeat code with no previous code length");
                value = lengths[i - 1];
                repeat = 3 + take(2);
            } else if (symbol == 17) {
                repeat = 3 + take(3);
            } else {
                repeat = 11 + take(7);
            }
            if (repeat > total - i) fail("code lengths repeat past the declared count");
            std::fill_n(lengths.begin() + i, repeat, value);
            i += repeat;
        }
        if (lengths[256] == 0) fail("dynamic block has no end-of-block code");
        build(tables_->literal, lengths.data(), literal_count, coverage::single_code_allowed, "literal/length");
        build(tables_->distance, lengths.data() + literal_count, distance_count, coverage::single_code_allowed, "distance");
        codes(tables_->literal, tables_->distance);
    }

    void stop_if_prefix_full() const {
        if (prefix_only_ && output_position_ == output_size_) throw prefix_full{};
    }

    [[noreturn]] void too_long() const {
        fail("the stream produces more than the " + std::to_string(output_size_) + " bytes expected");
    }

    void codes(const huffman_table& literal, const huffman_table& distance) {
        static constexpr std::uint16_t length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                                          15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                                          67, 83, 99, 115, 131, 163, 195, 227, 258};
        static constexpr std::uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                          2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
        static constexpr std::uint16_t distance_base[30] = {
            1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
            193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
        static constexpr std::uint8_t distance_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                                            6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
        for (;;) {
            const unsigned symbol = decode(literal, "literal/length");
            if (symbol < 256) {
                if (output_position_ == output_size_) {
                    if (prefix_only_) throw prefix_full{};
                    too_long();
                }
                output_[output_position_++] = std::byte(symbol);
                continue;
            }
            if (symbol == 256) return;
            const unsigned length_symbol = symbol - 257;
            if (length_symbol >= 29) fail("invalid length symbol " + std::to_string(symbol));
            std::size_t length = length_base[length_symbol] + take(length_extra[length_symbol]);
            const unsigned distance_symbol = decode(distance, "distance");
            if (distance_symbol >= 30) fail("invalid distance symbol " + std::to_string(distance_symbol));
            const std::size_t back = distance_base[distance_symbol] + take(distance_extra[distance_symbol]);
            if (back > output_position_)
                fail("a match refers " + std::to_string(back) + " bytes back but only " +
                     std::to_string(output_position_) + " have been produced");
            const bool fills_prefix = length > output_size_ - output_position_;
            if (fills_prefix) {
                if (!prefix_only_) too_long();
                length = output_size_ - output_position_;
            }
            std::byte* destination = output_ + output_position_;
            const std::byte* origin = destination - back;
            if (back >= length) {
                std::memcpy(destination, origin, length);
            } else {
                // Overlapping match: a run that repeats the last `back` bytes.
                for (std::size_t i = 0; i < length; ++i) destination[i] = origin[i];
            }
            output_position_ += length;
            if (fills_prefix) throw prefix_full{};
        }
    }

    const std::uint8_t* input_;
    std::size_t input_size_;
    std::size_t next_byte_ = 0;
    std::uint64_t bits_ = 0;
    int bit_count_ = 0;
    std::byte* output_;
    std::size_t output_size_;
    std::size_t output_position_ = 0;
    std::string_view source_;
    error_location stream_;
    std::unique_ptr<tables> tables_;
    huffman_table fixed_literal_{}, fixed_distance_{};
    bool fixed_built_ = false;
    bool prefix_only_;
    inflate_stats* stats_ = nullptr;
};

} // namespace detail

// Inflates `compressed` into `output`, which it must fill exactly.
// `stream` locates the stream for errors (see the top of this file).
inline void inflate_into(std::span<const std::byte> compressed, std::span<std::byte> output, std::string_view source,
                         inflate_stats* stats = nullptr, error_location stream = {}) {
    inflate_stats local;
    auto decoder = std::make_unique<detail::inflater>(compressed, output, source, detail::inflater::extent::whole,
                                                      std::move(stream));
    decoder->run(stats != nullptr ? *stats : local);
}

// Inflates only the first prefix.size() bytes of `compressed` (fewer when the
// stream is shorter) and returns how many it produced; the rest of the stream
// is not decoded. Corrupt data before that point is still an error. Lets a
// caller validate a header before it allocates the whole output.
inline std::size_t inflate_prefix(std::span<const std::byte> compressed, std::span<std::byte> prefix,
                                  std::string_view source, error_location stream = {}) {
    inflate_stats local;
    auto decoder = std::make_unique<detail::inflater>(compressed, prefix, source, detail::inflater::extent::prefix,
                                                      std::move(stream));
    try {
        decoder->run(local);
    } catch (const detail::inflater::prefix_full&) {
    }
    return decoder->produced();
}

inline std::vector<std::byte> inflate(std::span<const std::byte> compressed, std::size_t expected_size,
                                      std::string_view source, inflate_stats* stats = nullptr) {
    std::vector<std::byte> output(expected_size);
    inflate_into(compressed, output, source, stats);
    return output;
}

} // namespace numgap::io
