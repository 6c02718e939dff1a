#pragma once
// numgap::detail::consumer_signatures: order-invariant hashes of what
// consumes each node's value, and at which input position, refined over
// `depth` rounds (Weisfeiler–Lehman style, in the consumer direction), so
// that two candidates that look the same from their producers (the 1x1 and
// 3x3 expand convolutions of a Fire module, the q/k/v projections of an
// attention block) are told apart by where their values go.
//
// Both graphs are hashed separately with the same functions; a reference
// node and a target node "agree to round d" when their signatures of rounds
// 1..d are equal. What a backend changes freely must not change a
// signature, so nodes with a single input edge (activations, batch norm,
// bias adds, casts, quantize/dequantize, permutes, an op folded away or
// replaced by an unknown one) and passthrough nodes are contracted: their
// consumers count as the consumers of their producer, and their op is not
// hashed (conv -> bn -> relu -> concat and a fused Conv+Relu -> concat look
// alike). Only "junctions" (nodes with two or more input edges: add, concat,
// matmul, ...) leave a mark: their primary op family, the input position the
// value enters at (none for commutative ops) and their own signature of the
// previous round:
//   S_0(n) = 0
//   S_d(n) = leaf                         if n has no consumers
//          = sum over input edges (c, position) that consume n of
//              S_d(c)                                    if c is contracted
//              mix(family(c), position(c), S_{d-1}(c))   otherwise
// The sum (mod 2^64) of mixed 64-bit values is the multiset hash: it makes
// the signature independent of both graphs' node order and flattens chains
// of contracted nodes of any length. Shapes are not hashed (layouts differ).
// A second set of rounds hashes positions only (family(c) taken as empty):
// a junction replaced by an op nothing recognises, or spelled differently,
// still shows where each value enters it (q at the matmul's first input, k
// at its second), so agreement counts both sets.
// A third, strict set contracts passthrough nodes only: a single-input op
// leaves its family in its producer's sum, and its own signature of the
// same round (so the sequence of op families along a chain to the next
// junction is hashed):
//   T_d(n) = sum over input edges (c, position) that consume n of
//              T_d(c)                                    if c is passthrough
//              mix(family(c), T_d(c))                    if c has one input edge
//              mix(family(c), position(c), T_{d-1}(c))   otherwise
// A fusion or a fold changes it, so it only serves to tell apart candidates
// the loose rounds find equal (strict_agreement): ResNet's downsample 1x1
// conv (-> bn -> add) and its block's first conv (-> bn -> relu -> conv ->
// bn -> add) have the same producer, op, shape and loose signature.
//
// Cost: O(depth · (N + E)) time, O(depth · N) memory; never throws except
// std::bad_alloc.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <numgap/graph/concepts.hpp>

namespace numgap::detail {

inline constexpr std::size_t consumer_signature_rounds = 3;

inline std::uint64_t mix64(std::uint64_t x) {
    // splitmix64's finaliser: every input bit reaches every output bit.
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

inline std::uint64_t hash_family(std::string_view family) {
    std::uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a: the same value in both graphs and in every run
    for (char c : family) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return hash;
}

class consumer_signatures {
public:
    consumer_signatures() = default;

    // order: a topological order of g; family_hash, contracted, commutative:
    // per node (see the header comment).
    // passthrough (optional, else taken as `contracted`): the nodes the
    // strict rounds contract.
    template <class G>
    consumer_signatures(const G& g, const std::vector<std::size_t>& order, const std::vector<std::uint64_t>& family_hash,
                        const std::vector<char>& contracted, const std::vector<char>& commutative,
                        const std::vector<char>* passthrough = nullptr) {
        const std::size_t n = order.size();
        std::vector<char> has_consumer(n, 0);
        for (std::size_t node = 0; node < n; ++node)
            for (auto raw : numgap::producers(g, node)) has_consumer[static_cast<std::size_t>(raw)] = 1;
        refine(g, order, family_hash, contracted, commutative, has_consumer, rounds_);
        const std::vector<std::uint64_t> no_families(n, hash_family({}));
        refine(g, order, no_families, contracted, commutative, has_consumer, position_rounds_);
        std::vector<char> single_input(n, 0);
        for (std::size_t node = 0; node < n; ++node) {
            std::size_t input_edges = 0;
            for ([[maybe_unused]] auto raw : numgap::producers(g, node)) ++input_edges;
            single_input[node] = input_edges == 1;
        }
        refine(g, order, family_hash, passthrough ? *passthrough : contracted, commutative, has_consumer, strict_rounds_,
               &single_input);
    }

    // The number of leading strict rounds on which a and b agree:
    // 0 .. consumer_signature_rounds.
    std::size_t strict_agreement(std::size_t a, const consumer_signatures& other, std::size_t b) const {
        std::size_t rounds = 0;
        while (rounds < consumer_signature_rounds && strict_rounds_[rounds][a] == other.strict_rounds_[rounds][b]) ++rounds;
        return rounds;
    }

    // The number of leading rounds on which a (this graph) and b (other
    // graph) agree, with and without op families: 0 .. 2 · consumer_signature_rounds.
    std::size_t agreement(std::size_t a, const consumer_signatures& other, std::size_t b) const {
        std::size_t rounds = 0;
        while (rounds < consumer_signature_rounds && rounds_[rounds][a] == other.rounds_[rounds][b]) ++rounds;
        std::size_t position_rounds = 0;
        while (position_rounds < consumer_signature_rounds &&
               position_rounds_[position_rounds][a] == other.position_rounds_[position_rounds][b])
            ++position_rounds;
        return rounds + position_rounds;
    }

private:
    template <class G>
    static void refine(const G& g, const std::vector<std::size_t>& order, const std::vector<std::uint64_t>& family_hash,
                       const std::vector<char>& contracted, const std::vector<char>& commutative,
                       const std::vector<char>& has_consumer,
                       std::array<std::vector<std::uint64_t>, consumer_signature_rounds>& rounds,
                       const std::vector<char>* chain_link = nullptr) {
        const std::size_t n = order.size();
        constexpr std::uint64_t leaf = 0x6c656166u; // any fixed value other than a sum's usual ones
        for (std::size_t round = 0; round < consumer_signature_rounds; ++round) {
            auto& current = rounds[round];
            current.assign(n, 0);
            const std::vector<std::uint64_t>* previous = round == 0 ? nullptr : &rounds[round - 1];
            // Reverse topological order: every consumer of a node has pushed
            // its items into the node's sum before the node is read.
            for (auto it = order.rbegin(); it != order.rend(); ++it) {
                const std::size_t consumer = *it;
                if (!has_consumer[consumer]) current[consumer] = leaf;
                std::uint64_t position = 0;
                for (auto raw : numgap::producers(g, consumer)) {
                    ++position;
                    // A chain link's item differs from a junction's with the
                    // same family and previous-round signature (the constant).
                    const std::uint64_t item =
                        contracted[consumer] ? current[consumer]
                        : chain_link && (*chain_link)[consumer]
                            ? mix64(family_hash[consumer] ^ mix64(current[consumer] ^ 0x636861696eull))
                            : mix64(family_hash[consumer] ^ mix64((commutative[consumer] ? 0 : position) ^
                                                                  mix64(previous ? (*previous)[consumer] : 0)));
                    current[static_cast<std::size_t>(raw)] += item;
                }
            }
        }
    }

    std::array<std::vector<std::uint64_t>, consumer_signature_rounds> rounds_;
    std::array<std::vector<std::uint64_t>, consumer_signature_rounds> position_rounds_;
    std::array<std::vector<std::uint64_t>, consumer_signature_rounds> strict_rounds_;
};

} // namespace numgap::detail
