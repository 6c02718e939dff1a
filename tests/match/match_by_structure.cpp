// Pins down structural matching: renamed graphs, inserted no-ops (q/dq,
// permute, cast) walked through, deleted no-ops (dropout) skipped, fusion
// (conv+bn+relu -> one node), layout-permuted shapes, op incompatibility
// refusing a pair, symmetric siblings told apart by their consumers' input
// positions (Fire, q/k/v) or flagged ambiguous, anchors from a prior
// result, decompositions (layer_norm, gelu, softmax, linear), empty graphs,
// and the randomised recall/precision properties.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <numgap/graph/basic_graph.hpp>
#include <numgap/match/match_by_structure.hpp>

#include <numgap_support/synthetic_graphs.hpp>
#include "group_of.hpp"

namespace {
using numgap_match_test::group_of;

std::size_t add(numgap::basic_graph& g, const char* name, const char* op, std::vector<std::size_t> producers,
                numgap::shape_type shape) {
    const auto node = g.add_node(name, op, std::move(producers));
    g.set_output_shape(node, 0, std::move(shape));
    return node;
}

bool paired(const numgap::match_result& result, std::size_t r, std::size_t t) {
    const auto* group = group_of(result, r);
    return group && std::count(group->target_nodes.begin(), group->target_nodes.end(), t) == 1;
}
} // namespace

TEST_SUITE("match") {
TEST_CASE("match_by_structure: renamed chain with inserted and deleted noops") {
    // ref:    x -> conv -> relu -> dropout -> linear
    // target: x' -> Q -> DQ -> Conv -> Transpose -> Relu -> Gemm   (dropout deleted)
    numgap::basic_graph ref, tgt;
    const auto x = add(ref, "x", "input", {}, {1, 3, 8, 8});
    const auto conv = add(ref, "conv", "aten::conv2d", {x}, {1, 16, 8, 8});
    const auto relu = add(ref, "relu", "aten::relu", {conv}, {1, 16, 8, 8});
    const auto drop = add(ref, "drop", "aten::dropout", {relu}, {1, 16, 8, 8});
    const auto linear = add(ref, "fc", "aten::linear", {drop}, {1, 10});
    const auto tx = add(tgt, "in0", "input", {}, {1, 3, 8, 8});
    const auto q = add(tgt, "q", "QuantizeLinear", {tx}, {1, 3, 8, 8});
    const auto dq = add(tgt, "dq", "DequantizeLinear", {q}, {1, 3, 8, 8});
    const auto tconv = add(tgt, "n1", "Conv", {dq}, {1, 16, 8, 8});
    const auto perm = add(tgt, "p", "Transpose", {tconv}, {1, 8, 8, 16});
    const auto trelu = add(tgt, "n2", "Relu", {perm}, {1, 8, 8, 16}); // NHWC: permuted shape
    const auto tfc = add(tgt, "n3", "Gemm", {trelu}, {1, 10});
    const auto result = numgap::match_by_structure(ref, tgt);
    CHECK(paired(result, x, tx));
    CHECK(paired(result, conv, tconv));
    CHECK(paired(result, relu, trelu));
    CHECK(paired(result, linear, tfc));
    CHECK(group_of(result, drop) == nullptr);
    CHECK(result.unmatched_reference == std::vector<std::size_t>{drop});
    CHECK(result.unmatched_target == std::vector<std::size_t>{q, dq, perm});
    for (const auto& group : result.groups) {
        CHECK(group.strategy == "structure");
        CHECK(group.confidence > 0.5);
        CHECK(group.confidence <= 1.0);
    }
    // The permuted shape costs a little confidence, exact shapes cost none.
    CHECK(group_of(result, relu)->confidence < group_of(result, conv)->confidence);
    CHECK(group_of(result, conv)->confidence == doctest::Approx(1.0));
}

TEST_CASE("match_by_structure: conv bn relu fused into one target node") {
    numgap::basic_graph ref, tgt;
    const auto x = add(ref, "x", "input", {}, {1, 3, 8, 8});
    const auto conv = add(ref, "conv", "aten::conv2d", {x}, {1, 8, 8, 8});
    const auto bn = add(ref, "bn", "aten::batch_norm", {conv}, {1, 8, 8, 8});
    const auto relu = add(ref, "relu", "aten::relu", {bn}, {1, 8, 8, 8});
    const auto pool = add(ref, "pool", "aten::max_pool2d", {relu}, {1, 8, 4, 4});
    add(tgt, "t_in", "input", {}, {1, 3, 8, 8});
    const auto fused = add(tgt, "t_fused", "CONV_2D", {0}, {1, 8, 8, 8}); // TFLite: conv with folded bn + relu
    const auto tpool = add(tgt, "t_pool", "MAX_POOL_2D", {fused}, {1, 8, 4, 4});
    const auto result = numgap::match_by_structure(ref, tgt);
    const auto* group = group_of(result, conv);
    REQUIRE(group != nullptr);
    CHECK(group->reference_nodes == std::vector<std::size_t>{conv, bn, relu});
    CHECK(group->target_nodes == std::vector<std::size_t>{fused});
    CHECK(group->kind == numgap::match_kind::fused);
    CHECK(group->reference_output_node == relu); // compare the chain's output
    CHECK(paired(result, pool, tpool));
    CHECK(result.unmatched_reference.empty());
}

TEST_CASE("match_by_structure: fused name absorbs its parts in order") {
    // "Conv+Relu" covers conv then relu; the following conv is a new node
    // even though "conv" is also a part of the host's name.
    numgap::basic_graph ref, tgt;
    add(ref, "x", "input", {}, {1, 4});
    add(ref, "c1", "aten::conv2d", {0}, {1, 4});
    add(ref, "r1", "aten::relu", {1}, {1, 4});
    add(ref, "c2", "aten::conv2d", {2}, {1, 4});
    add(ref, "r2", "aten::relu", {3}, {1, 4});
    add(tgt, "x", "input", {}, {1, 4});
    add(tgt, "a", "Conv+Relu", {0}, {1, 4});
    add(tgt, "b", "Conv+Relu", {1}, {1, 4});
    const auto result = numgap::match_by_structure(ref, tgt);
    REQUIRE(result.groups.size() == 3);
    CHECK(result.groups[1].reference_nodes == std::vector<std::size_t>{1, 2});
    CHECK(result.groups[1].target_nodes == std::vector<std::size_t>{1});
    CHECK(result.groups[2].reference_nodes == std::vector<std::size_t>{3, 4});
    CHECK(result.groups[2].target_nodes == std::vector<std::size_t>{2});
}

TEST_CASE("match_by_structure: refuses incompatible ops and continues after them") {
    // The target replaced sigmoid by an unrelated op; structure must not pair
    // them, and must still pair what follows (never abort on a mismatch).
    numgap::basic_graph ref, tgt;
    add(ref, "x", "input", {}, {1, 4});
    add(ref, "s", "aten::sigmoid", {0}, {1, 4});
    add(ref, "fc", "aten::linear", {1}, {1, 2});
    add(tgt, "x", "input", {}, {1, 4});
    add(tgt, "weird", "CustomOp", {0}, {1, 4});
    add(tgt, "fc", "MatMul", {1}, {1, 2});
    const auto result = numgap::match_by_structure(ref, tgt);
    CHECK(group_of(result, 1) == nullptr);
    CHECK(result.unmatched_target == std::vector<std::size_t>{1});
    // fc follows the replaced op: it is found behind the substitute.
    const auto* fc = group_of(result, 2);
    REQUIRE(fc != nullptr);
    CHECK(fc->target_nodes == std::vector<std::size_t>{2});
}

TEST_CASE("match_by_structure: tells fire expand branches apart by the concat input they feed") {
    // SqueezeNet Fire module: expand1x1 and expand3x3 have the same op,
    // producer and shape; only the concat's input position tells them apart.
    // The target lists the 3x3 branch first (another valid topological
    // order) and inserts a cast on the 1x1 branch: the old tie-break by
    // target order swapped them.
    numgap::basic_graph ref, tgt;
    const auto x = add(ref, "x", "input", {}, {1, 16, 8, 8});
    const auto squeeze = add(ref, "squeeze", "aten::conv2d", {x}, {1, 4, 8, 8});
    const auto e1 = add(ref, "expand1x1", "aten::conv2d", {squeeze}, {1, 8, 8, 8});
    const auto r1 = add(ref, "relu1", "aten::relu", {e1}, {1, 8, 8, 8});
    const auto e3 = add(ref, "expand3x3", "aten::conv2d", {squeeze}, {1, 8, 8, 8});
    const auto r3 = add(ref, "relu3", "aten::relu", {e3}, {1, 8, 8, 8});
    const auto cat = add(ref, "cat", "aten::cat", {r1, r3}, {1, 16, 8, 8});
    const auto tx = add(tgt, "a", "input", {}, {1, 16, 8, 8});
    const auto tsqueeze = add(tgt, "b", "Conv", {tx}, {1, 4, 8, 8});
    const auto te3 = add(tgt, "c", "Conv", {tsqueeze}, {1, 8, 8, 8});
    const auto tr3 = add(tgt, "d", "Relu", {te3}, {1, 8, 8, 8});
    const auto te1 = add(tgt, "e", "Conv", {tsqueeze}, {1, 8, 8, 8});
    const auto cast = add(tgt, "f", "Cast", {te1}, {1, 8, 8, 8});
    const auto tr1 = add(tgt, "g", "Relu", {cast}, {1, 8, 8, 8});
    const auto tcat = add(tgt, "h", "Concat", {tr1, tr3}, {1, 16, 8, 8});
    const auto result = numgap::match_by_structure(ref, tgt);
    CHECK(paired(result, e1, te1));
    CHECK(paired(result, r1, tr1));
    CHECK(paired(result, e3, te3));
    CHECK(paired(result, r3, tr3));
    CHECK(paired(result, cat, tcat));
    for (const auto& group : result.groups) CHECK_FALSE(group.ambiguous());
}

TEST_CASE("match_by_structure: tells q k v apart by where they enter the attention") {
    // q enters the score matmul first, k second (behind a transpose), v the
    // second matmul after the softmax. The target lists them v, k, q, and a
    // backend replaced the score matmul by an op nothing recognises: input
    // positions still tell q from k, and what follows the matmul (softmax vs
    // the output projection) k from v.
    numgap::basic_graph ref, tgt;
    const auto x = add(ref, "x", "input", {}, {1, 4, 8});
    const auto q = add(ref, "q", "aten::linear", {x}, {1, 4, 8});
    const auto k = add(ref, "k", "aten::linear", {x}, {1, 4, 8});
    const auto v = add(ref, "v", "aten::linear", {x}, {1, 4, 8});
    const auto kt = add(ref, "kt", "aten::transpose.int", {k}, {1, 8, 4});
    const auto scores = add(ref, "scores", "aten::matmul", {q, kt}, {1, 4, 4});
    const auto probs = add(ref, "probs", "aten::softmax.int", {scores}, {1, 4, 4});
    const auto context = add(ref, "context", "aten::matmul", {probs, v}, {1, 4, 8});
    const auto out = add(ref, "out", "aten::linear", {context}, {1, 4, 8});
    add(ref, "residual", "aten::add.Tensor", {x, out}, {1, 4, 8});
    const auto tx = add(tgt, "in", "input", {}, {1, 4, 8});
    const auto tv = add(tgt, "n1", "Gemm", {tx}, {1, 4, 8});
    const auto tk = add(tgt, "n2", "Gemm", {tx}, {1, 4, 8});
    const auto tq = add(tgt, "n3", "Gemm", {tx}, {1, 4, 8});
    const auto tkt = add(tgt, "n4", "Transpose", {tk}, {1, 8, 4});
    add(tgt, "n5", "VendorAttentionScores", {tq, tkt}, {1, 4, 4});
    const auto tprobs = add(tgt, "n6", "Softmax", {5}, {1, 4, 4});
    const auto tcontext = add(tgt, "n7", "MatMul", {tprobs, tv}, {1, 4, 8});
    const auto tout = add(tgt, "n8", "Gemm", {tcontext}, {1, 4, 8});
    add(tgt, "n9", "Add", {tout, tx}, {1, 4, 8});
    const auto result = numgap::match_by_structure(ref, tgt);
    CHECK(paired(result, q, tq));
    CHECK(paired(result, k, tk));
    CHECK(paired(result, v, tv));
    CHECK(paired(result, kt, tkt));
    CHECK(paired(result, context, tcontext));
    CHECK(group_of(result, scores) == nullptr); // replaced: no counterpart
    for (const auto& group : result.groups) CHECK_FALSE(group.ambiguous());
}

TEST_CASE("match_by_structure: flags siblings nothing tells apart as ambiguous") {
    // Three projections of one input with no consumers: nothing the matcher
    // knows tells them apart. Each is still paired (a guess, not by target
    // order), ambiguous_with lists the two others, and the confidence is
    // divided by the number of equals.
    numgap::basic_graph ref, tgt;
    add(ref, "x", "input", {}, {1, 4, 8});
    for (const char* name : {"q", "k", "v"}) add(ref, name, "aten::linear", {0}, {1, 4, 8});
    add(tgt, "x", "input", {}, {1, 4, 8});
    add(tgt, "Q", "Gemm", {0}, {1, 4, 8});
    add(tgt, "K", "Gemm", {0}, {1, 4, 8});
    add(tgt, "V", "Gemm", {0}, {1, 4, 8});
    const auto result = numgap::match_by_structure(ref, tgt);
    REQUIRE(result.groups.size() == 4);
    CHECK_FALSE(group_of(result, 0)->ambiguous());
    std::vector<std::size_t> images;
    for (std::size_t r = 1; r <= 3; ++r) {
        const auto* group = group_of(result, r);
        REQUIRE(group != nullptr);
        CHECK(group->ambiguous_with.size() == 2);
        CHECK(std::count(group->ambiguous_with.begin(), group->ambiguous_with.end(), group->target_output_node) == 0);
        CHECK(group->confidence == doctest::Approx(1.0 / 3.0));
        images.push_back(group->target_output_node);
    }
    std::sort(images.begin(), images.end());
    CHECK(images == std::vector<std::size_t>{1, 2, 3});
    CHECK(group_of(result, 0)->confidence == doctest::Approx(1.0));
}

TEST_CASE("match_by_structure: flags both of two symmetric branches summed by a commutative add") {
    // x -> a -> add <- b <- x with a and b alike: add's operands may be
    // reordered by a backend, so nothing tells the branches apart. Both
    // pairs are ambiguous (each names the other branch) at half confidence;
    // the add itself is not. The pick does not follow the target's order:
    // with the target's branches listed the other way round, each reference
    // branch goes to the target node of the same name as before.
    for (bool reversed : {false, true}) {
        CAPTURE(reversed);
        numgap::basic_graph ref, tgt;
        add(ref, "x", "input", {}, {1, 8});
        const auto a = add(ref, "a", "aten::sigmoid", {0}, {1, 8});
        const auto b = add(ref, "b", "aten::sigmoid", {0}, {1, 8});
        const auto sum = add(ref, "sum", "aten::add.Tensor", {a, b}, {1, 8});
        add(tgt, "x", "input", {}, {1, 8});
        const auto first = add(tgt, reversed ? "branch_2" : "branch_1", "Sigmoid", {0}, {1, 8});
        const auto second = add(tgt, reversed ? "branch_1" : "branch_2", "Sigmoid", {0}, {1, 8});
        const auto tsum = add(tgt, "s", "Add", {first, second}, {1, 8});
        const auto result = numgap::match_by_structure(ref, tgt);
        const auto branch_1 = reversed ? second : first;
        const auto branch_2 = reversed ? first : second;
        CHECK(paired(result, a, branch_1));
        CHECK(paired(result, b, branch_2));
        CHECK(group_of(result, a)->ambiguous_with == std::vector<std::size_t>{branch_2});
        CHECK(group_of(result, b)->ambiguous_with == std::vector<std::size_t>{branch_1});
        CHECK(group_of(result, a)->confidence == doctest::Approx(0.5));
        CHECK(group_of(result, b)->confidence == doctest::Approx(0.5));
        CHECK(paired(result, sum, tsum));
        CHECK_FALSE(group_of(result, sum)->ambiguous());
    }
}

TEST_CASE("match_by_structure: anchors on prior groups") {
    // Without anchors, the target input is ambiguous (two inputs); a prior
    // name match pins the right one and structure follows from there.
    numgap::basic_graph ref, tgt;
    add(ref, "tokens", "input", {}, {1, 8});
    add(ref, "relu", "aten::relu", {0}, {1, 8});
    add(tgt, "mask", "input", {}, {1, 8});
    add(tgt, "tokens", "input", {}, {1, 8});
    add(tgt, "relu_a", "Relu", {0}, {1, 8});
    add(tgt, "relu_b", "Relu", {1}, {1, 8});
    numgap::match_result prior;
    prior.groups.push_back({{0}, {1}, numgap::match_kind::one_to_one, "name", 1, 0, 1, "tokens", "tokens", {}});
    const auto result = numgap::match_by_structure(ref, tgt, {}, prior);
    CHECK(paired(result, 1, 3));
    CHECK(group_of(result, 0)->strategy == "name");
}

TEST_CASE("match_by_structure: finds a two op decomposition and continues") {
    // layer_norm lowered to two non-passthrough ops (a region fed by x with
    // one exit, sub): one decomposed group, and fc after it.
    numgap::basic_graph ref, tgt;
    add(ref, "x", "input", {}, {1, 8});
    add(ref, "ln", "aten::layer_norm", {0}, {1, 8});
    add(ref, "fc", "aten::linear", {1}, {1, 4});
    add(tgt, "x", "input", {}, {1, 8});
    add(tgt, "mean", "ReduceMean", {0}, {1, 1});
    add(tgt, "sub", "Sub", {0, 1}, {1, 8});
    add(tgt, "fc", "Gemm", {2}, {1, 4});
    const auto result = numgap::match_by_structure(ref, tgt);
    const auto* ln = group_of(result, 1);
    REQUIRE(ln != nullptr);
    CHECK(ln->kind == numgap::match_kind::decomposed);
    CHECK(ln->target_nodes == std::vector<std::size_t>{1, 2});
    CHECK(ln->target_output_node == 2);
    CHECK(paired(result, 2, 3));
    CHECK(result.unmatched_target.empty());
}

namespace {
// x -> <op> -> fc in the reference; in the target x -> <the lowering> -> Gemm,
// built by `lower` from the target's input node (returns the exit), with an
// inserted cast before the Gemm.
template <class Lower>
void check_decomposition(const char* op, Lower lower) {
    CAPTURE(op);
    numgap::basic_graph ref, tgt;
    const auto x = add(ref, "x", "input", {}, {1, 4, 8});
    const auto decomposed = add(ref, "op", op, {x}, {1, 4, 8});
    const auto fc = add(ref, "fc", "aten::linear", {decomposed}, {1, 4, 2});
    add(ref, "out", "aten::relu", {fc}, {1, 4, 2});
    const auto tx = add(tgt, "in", "input", {}, {1, 4, 8});
    const std::size_t first_piece = tgt.num_nodes();
    const auto exit = lower(tgt, tx);
    const std::size_t pieces = tgt.num_nodes() - first_piece;
    const auto cast = add(tgt, "cast", "Cast", {exit}, {1, 4, 8});
    const auto tfc = add(tgt, "gemm", "Gemm", {cast}, {1, 4, 2});
    add(tgt, "relu", "Relu", {tfc}, {1, 4, 2});
    const auto result = numgap::match_by_structure(ref, tgt);
    const auto* group = group_of(result, decomposed);
    REQUIRE(group != nullptr);
    CHECK(group->kind == numgap::match_kind::decomposed);
    CHECK(group->target_nodes.size() == pieces);
    CHECK(group->target_output_node == exit);
    CHECK(group->confidence > 0.5);
    CHECK_FALSE(group->ambiguous());
    CHECK(paired(result, fc, tfc));
    CHECK(result.unmatched_reference.empty());
    CHECK(result.unmatched_target == std::vector<std::size_t>{cast});
}
} // namespace

TEST_CASE("match_by_structure: finds decomposed layer norm gelu softmax and linear") {
    const numgap::shape_type hidden{1, 4, 8}, reduced{1, 4, 1};
    check_decomposition("aten::layer_norm", [&](numgap::basic_graph& g, std::size_t x) {
        const auto mean = add(g, "mean", "aten::mean.dim", {x}, reduced);
        const auto centered = add(g, "sub", "aten::sub.Tensor", {x, mean}, hidden);
        const auto square = add(g, "pow", "aten::pow.Tensor_Scalar", {centered}, hidden);
        const auto variance = add(g, "var", "aten::mean.dim", {square}, reduced);
        const auto eps = add(g, "eps", "aten::add.Scalar", {variance}, reduced);
        const auto scale = add(g, "rsqrt", "aten::rsqrt", {eps}, reduced);
        const auto normed = add(g, "mul", "aten::mul.Tensor", {centered, scale}, hidden);
        const auto weighted = add(g, "gamma", "aten::mul.Tensor", {normed}, hidden);
        return add(g, "beta", "aten::add.Tensor", {weighted}, hidden);
    });
    check_decomposition("aten::gelu", [&](numgap::basic_graph& g, std::size_t x) {
        const auto half = add(g, "half", "aten::mul.Tensor", {x}, hidden);
        const auto scaled = add(g, "scaled", "aten::mul.Tensor", {x}, hidden);
        const auto erf = add(g, "erf", "aten::erf", {scaled}, hidden);
        const auto one_plus = add(g, "one_plus", "aten::add.Scalar", {erf}, hidden);
        return add(g, "out", "aten::mul.Tensor", {half, one_plus}, hidden);
    });
    check_decomposition("aten::softmax.int", [&](numgap::basic_graph& g, std::size_t x) {
        // A small DAG, not a chain: exp feeds both sum and div.
        const auto max = add(g, "amax", "aten::amax", {x}, reduced);
        const auto shifted = add(g, "sub", "aten::sub.Tensor", {x, max}, hidden);
        const auto exp = add(g, "exp", "aten::exp", {shifted}, hidden);
        const auto sum = add(g, "sum", "aten::sum.dim_IntList", {exp}, reduced);
        return add(g, "div", "aten::div.Tensor", {exp, sum}, hidden);
    });
}

TEST_CASE("match_by_structure: pairs linear with its addmm lowering") {
    // linear -> t(weight) + addmm(bias, x, t(weight)): the weight path is a
    // source of the graph, addmm is the matmul family: a plain pair.
    numgap::basic_graph ref, tgt;
    add(ref, "x", "input", {}, {4, 8});
    add(ref, "fc", "aten::linear", {0}, {4, 2});
    add(ref, "out", "aten::relu", {1}, {4, 2});
    add(tgt, "x", "input", {}, {4, 8});
    add(tgt, "weight", "get_attr", {}, {2, 8});
    add(tgt, "weight_t", "aten::permute", {1}, {8, 2});
    add(tgt, "addmm", "aten::addmm", {0, 2}, {4, 2});
    add(tgt, "relu", "aten::relu", {3}, {4, 2});
    const auto result = numgap::match_by_structure(ref, tgt);
    CHECK(paired(result, 0, 0));
    CHECK(paired(result, 1, 3));
    CHECK(paired(result, 2, 4));
}

TEST_CASE("match_by_structure: empty graphs and custom predicates") {
    numgap::basic_graph empty, one;
    add(one, "x", "input", {}, {1});
    CHECK(numgap::match_by_structure(empty, empty).groups.empty());
    CHECK(numgap::match_by_structure(one, empty).unmatched_reference == std::vector<std::size_t>{0});
    CHECK(numgap::match_by_structure(empty, one).unmatched_target == std::vector<std::size_t>{0});
    // A user equivalence that rejects everything matches nothing.
    numgap::match_options options;
    options.ops_equivalent = [](std::string_view, std::string_view) { return false; };
    CHECK(numgap::match_by_structure(one, one, options).groups.empty());
}

namespace {
struct quality {
    std::size_t with_counterpart = 0, recovered = 0, reported = 0, correct = 0;
    double recall() const { return static_cast<double>(recovered) / static_cast<double>(with_counterpart); }
    double precision() const { return static_cast<double>(correct) / static_cast<double>(reported); }
};

quality measure(const numgap_test::synthetic_pair& pair, const numgap::match_result& result) {
    quality q;
    std::vector<char> recovered(pair.reference.num_nodes(), 0);
    for (const auto& group : result.groups) {
        for (auto r : group.reference_nodes) {
            ++q.reported;
            const auto& truth = pair.counterpart[r];
            const bool right = std::any_of(truth.begin(), truth.end(), [&](std::size_t t) {
                return std::count(group.target_nodes.begin(), group.target_nodes.end(), t) > 0;
            });
            if (right) {
                ++q.correct;
                recovered[r] = 1;
            }
        }
    }
    for (std::size_t r = 0; r < pair.reference.num_nodes(); ++r) {
        if (pair.counterpart[r].empty()) continue;
        ++q.with_counterpart;
        q.recovered += recovered[r];
    }
    return q;
}
} // namespace

TEST_CASE("match_by_structure: recovers random graphs") {
    // Every node renamed, 15-30% of edges get an inserted no-op (q/dq pair,
    // cast, transpose, reshape), most dropout/identity nodes deleted, most
    // conv+bn(+relu), linear+gelu and add+relu chains fused, target shapes
    // NHWC in half the runs. Structure must recover >= 95% of the reference
    // nodes that still have a counterpart, with >= 99% of its pairs right.
    // Ten seeds per family and layout (a sweep of 80 more found no exception).
    std::uint64_t seed = 4242;
    for (auto family : {numgap_test::model_family::cnn, numgap_test::model_family::transformer}) {
        for (int variant = 0; variant < 20; ++variant) {
            ++seed;
            CAPTURE(seed);
            std::mt19937_64 rng(seed);
            numgap_test::derive_options options;
            options.handles = false;
            options.nhwc = variant % 2 == 1;
            options.insert_rate = variant % 2 == 1 ? 0.3 : 0.15;
            auto pair = numgap_test::derive_target(numgap_test::make_reference(family, 1500, rng), options, rng);
            const auto result = numgap::match_by_structure(pair.reference, pair.target);
            const auto q = measure(pair, result);
            const double recall = q.recall();
            const double precision = q.precision();
            CAPTURE(recall);
            CAPTURE(precision);
            CHECK(q.with_counterpart > 1000);
            CHECK(recall >= 0.95);
            CHECK(precision >= 0.99);
        }
    }
}

TEST_CASE("match_by_structure: pairs symmetric siblings in shuffled targets") {
    // The property on graphs whose siblings share producer, op and
    // shape: Fire modules, Inception blocks, q/k/v projections, residual
    // blocks (skip and main path of one shape). Every node renamed, the
    // target renumbered in a random valid topological order, no-ops inserted
    // on 15-30% of the edges, most dropout/identity nodes deleted, chains
    // fused, half the runs NHWC. Recall >= 95% and precision >= 99% on each
    // of 40 seeds per family (the greedy matcher that broke ties by target
    // order fell below on every seed of the three symmetric families).
    for (auto family : {numgap_test::model_family::cnn, numgap_test::model_family::transformer,
                        numgap_test::model_family::fire, numgap_test::model_family::inception}) {
        for (std::uint64_t seed = 1; seed <= 40; ++seed) {
            CAPTURE(static_cast<int>(family));
            CAPTURE(seed);
            std::mt19937_64 rng(seed);
            numgap_test::derive_options options;
            options.handles = false;
            options.shuffle = true;
            options.nhwc = seed % 2 == 1;
            options.insert_rate = seed % 2 == 1 ? 0.3 : 0.15;
            auto pair = numgap_test::derive_target(numgap_test::make_reference(family, 300, rng), options, rng);
            const auto q = measure(pair, numgap::match_by_structure(pair.reference, pair.target));
            const double recall = q.recall();
            const double precision = q.precision();
            CAPTURE(recall);
            CAPTURE(precision);
            CHECK(q.with_counterpart > 150);
            CHECK(recall >= 0.95);
            CHECK(precision >= 0.99);
        }
    }
}

TEST_CASE("match_by_structure: survives folded and replaced ops") {
    // Harder than the property: on top of the above, 1% of real ops
    // are folded away (no counterpart; consumers rewired to the input) and
    // 1% are replaced by an unrecognised vendor op (no counterpart either).
    // Pinned down: the walk re-anchors past such local failures, so recall
    // stays >= 95% and precision >= 99% on both families for these seeds.
    // Not on every seed: a sweep of 160 runs (seeds 10001-10080, both
    // families) finds 1 below the bar, at 98.3% recall and 98.6%
    // precision, none cascading (the cascades that were are pinned down
    // below).
    // Seed 5002 is the regression case: a folded batch_norm took the fused
    // conv+bn node of a later conv, and before re-anchoring the pass stalled
    // (~18% recall).
    std::uint64_t seed = 5000;
    for (auto family : {numgap_test::model_family::cnn, numgap_test::model_family::transformer}) {
        for (int variant = 0; variant < 2; ++variant) {
            ++seed;
            MESSAGE("seed = " << seed);
            std::mt19937_64 rng(seed);
            numgap_test::derive_options options;
            options.handles = false;
            options.nhwc = variant == 1;
            options.drop_any_rate = 0.01;
            options.replace_rate = 0.01;
            auto pair = numgap_test::derive_target(numgap_test::make_reference(family, 1500, rng), options, rng);
            const auto q = measure(pair, numgap::match_by_structure(pair.reference, pair.target));
            const double recall = q.recall();
            const double precision = q.precision();
            MESSAGE("recall " << recall << ", precision " << precision);
            CHECK(recall >= 0.95);
            CHECK(precision >= 0.99);
        }
    }
}

TEST_CASE("match_by_structure: does not cascade on the sweep seeds that used to") {
    // Seeds of the folded/unrecognised-op sweep (README, "By structure":
    // seeds 10001-10080, both families, NHWC on odd seeds) on which one
    // early wrong pair shifted every later repeated block by one: the
    // greedy matcher's five (precision 0.21-0.72: a relu folded after a
    // residual add taking the next block's add+relu as "a later part of a
    // fused name", 10011; a candidate whose other input is computation its
    // producers do not explain, i.e. the next block's copy, 10004, 10028,
    // 10077; a replaced op skipped behind a matched producer, 10071), and
    // two that cascaded under intermediate versions of the consumer-aware
    // matcher (10055: consumer agreement overruling an explicit fused part;
    // 10058: a residual add absorbed into a convolution that does not see
    // its other input).
    const std::pair<std::uint64_t, numgap_test::model_family> cases[] = {
        {10004, numgap_test::model_family::transformer}, {10011, numgap_test::model_family::cnn},
        {10028, numgap_test::model_family::cnn},         {10055, numgap_test::model_family::cnn},
        {10058, numgap_test::model_family::cnn},         {10071, numgap_test::model_family::cnn},
        {10077, numgap_test::model_family::cnn}};
    // Not a structured binding: CAPTURE captures `seed` in a lambda, which clang 14 refuses for bindings.
    for (const auto& seeded : cases) {
        const auto seed = seeded.first;
        const auto family = seeded.second;
        CAPTURE(seed);
        std::mt19937_64 rng(seed);
        numgap_test::derive_options options;
        options.handles = false;
        options.nhwc = seed % 2 == 1;
        options.drop_any_rate = 0.01;
        options.replace_rate = 0.01;
        auto pair = numgap_test::derive_target(numgap_test::make_reference(family, 1500, rng), options, rng);
        const auto q = measure(pair, numgap::match_by_structure(pair.reference, pair.target));
        const double recall = q.recall();
        const double precision = q.precision();
        CAPTURE(recall);
        CAPTURE(precision);
        CHECK(recall >= 0.95);
        CHECK(precision >= 0.99);
    }
}

TEST_CASE("match_by_structure: finds decomposed layer norms in random transformers") {
    // Half the layer norms lowered to ReduceMean, Sub, Pow, ReduceMean,
    // Rsqrt, Mul in shuffled, renamed targets with inserted no-ops: every
    // one is found as one decomposed group holding all its pieces, and
    // nothing else is taken for a decomposition.
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        CAPTURE(seed);
        std::mt19937_64 rng(seed);
        numgap_test::derive_options options;
        options.handles = false;
        options.shuffle = true;
        options.decompose_rate = 0.5;
        auto pair = numgap_test::derive_target(
            numgap_test::make_reference(numgap_test::model_family::transformer, 300, rng), options, rng);
        const auto result = numgap::match_by_structure(pair.reference, pair.target);
        std::size_t lowered = 0, found = 0, decomposed_groups = 0;
        for (const auto& group : result.groups) decomposed_groups += group.kind == numgap::match_kind::decomposed;
        for (std::size_t r = 0; r < pair.reference.num_nodes(); ++r) {
            if (pair.counterpart[r].size() < 2) continue;
            ++lowered;
            const auto* group = group_of(result, r);
            found += group && group->kind == numgap::match_kind::decomposed &&
                     std::all_of(pair.counterpart[r].begin(), pair.counterpart[r].end(), [&](std::size_t t) {
                         return std::count(group->target_nodes.begin(), group->target_nodes.end(), t) == 1;
                     });
        }
        CHECK(lowered > 0);
        CHECK(found == lowered);
        CHECK(decomposed_groups == lowered);
        const auto q = measure(pair, result);
        CHECK(q.recall() >= 0.99);
        CHECK(q.precision() >= 0.99);
    }
}

TEST_CASE("match_by_structure: bounds its work on a huge fan out duplicate producers and empty ops") {
    // What fuzzed graphs contain: 300 equal consumers of one node, a node
    // listing the same producer twice, ops left empty. Every consumer is
    // paired (a guess among equals: ambiguous, at most 64 equals named) and
    // the run stays near-linear (more consumers than the caps on candidates
    // (256), siblings examined (256) and tie classes (64)).
    numgap::basic_graph ref, tgt;
    add(ref, "x", "input", {}, {1, 8});
    add(tgt, "x", "input", {}, {1, 8});
    for (int i = 0; i < 300; ++i) {
        add(ref, "r", "aten::relu", {0}, {1, 8});
        add(tgt, "t", "Relu", {0}, {1, 8});
    }
    add(ref, "square", "aten::mul.Tensor", {1, 1}, {1, 8}); // node 301: the first relu twice
    add(tgt, "square", "", {1, 1}, {1, 8});
    add(ref, "unknown", "", {301}, {1, 8});
    add(tgt, "unknown", "", {301}, {1, 8});
    const auto result = numgap::match_by_structure(ref, tgt);
    CHECK(result.unmatched_reference.empty());
    std::size_t ambiguous = 0;
    for (const auto& group : result.groups) {
        CHECK(group.ambiguous_with.size() <= 64);
        ambiguous += group.ambiguous();
    }
    CHECK(ambiguous >= 299);
    CHECK(paired(result, 302, 302));
}

namespace {
// A ResNet downsample block: main path c1 -> b1 -> r1 -> c2 -> b2, shortcut
// dc -> db, both summed by a commutative add. c1 and dc share producer, op
// and shape, and their loose consumer signatures (single-input ops
// contracted) are equal.
struct downsample_block {
    numgap::basic_graph graph;
    std::size_t x, c1, b1, r1, c2, b2, dc, db, sum, out;
};

// shortcut_first: the shortcut is listed (and numbered) before the main
// path; main_name/shortcut_name: the convs' names (the smaller one is the
// matcher's guess among equals, so both name orders are tried).
downsample_block make_downsample_block(bool shortcut_first, const char* main_name, const char* shortcut_name,
                                       bool short_main_path = false) {
    downsample_block block;
    auto& g = block.graph;
    const numgap::shape_type in{1, 8, 8, 8}, out{1, 16, 4, 4};
    block.x = add(g, "x", "input", {}, in);
    auto main_path = [&] {
        block.c1 = add(g, main_name, "aten.convolution.default", {block.x}, out);
        block.b1 = add(g, (std::string(main_name) + "_bn").c_str(), "aten.batch_norm.default", {block.c1}, out);
        if (short_main_path) {
            block.r1 = block.c2 = block.b2 = block.b1;
            return;
        }
        block.r1 = add(g, (std::string(main_name) + "_relu").c_str(), "aten.relu.default", {block.b1}, out);
        block.c2 = add(g, (std::string(main_name) + "_conv2").c_str(), "aten.convolution.default", {block.r1}, out);
        block.b2 = add(g, (std::string(main_name) + "_bn2").c_str(), "aten.batch_norm.default", {block.c2}, out);
    };
    auto shortcut = [&] {
        block.dc = add(g, shortcut_name, "aten.convolution.default", {block.x}, out);
        block.db = add(g, (std::string(shortcut_name) + "_bn").c_str(), "aten.batch_norm.default", {block.dc}, out);
    };
    if (shortcut_first) {
        shortcut();
        main_path();
    } else {
        main_path();
        shortcut();
    }
    block.sum = add(g, "sum", "aten.add.Tensor", {block.b2, block.db}, out);
    block.out = add(g, "out", "aten.relu.default", {block.sum}, out);
    return block;
}
} // namespace

TEST_CASE("match_by_structure: tells a resnet downsample shortcut from the main path by its op chain") {
    // The loose evidence ties c1 and dc; the sequence of ops to the add
    // (bn, relu, conv, bn vs bn) does not. Every pair is right and
    // unambiguous whatever the target's order and whichever name sorts
    // first (the guess among equals used to swap the convs for one of the
    // two name orders, and their batch norms with them, at confidence 1).
    const auto ref = make_downsample_block(false, "layer2_0_conv1", "layer2_0_downsample_0");
    for (bool shortcut_first : {false, true})
        for (bool main_sorts_first : {false, true}) {
            CAPTURE(shortcut_first);
            CAPTURE(main_sorts_first);
            const auto tgt = make_downsample_block(shortcut_first, main_sorts_first ? "t_1" : "t_2",
                                                   main_sorts_first ? "t_2" : "t_1");
            const auto result = numgap::match_by_structure(ref.graph, tgt.graph);
            CHECK(paired(result, ref.c1, tgt.c1));
            CHECK(paired(result, ref.dc, tgt.dc));
            CHECK(paired(result, ref.b1, tgt.b1));
            CHECK(paired(result, ref.db, tgt.db));
            CHECK(paired(result, ref.b2, tgt.b2));
            CHECK(paired(result, ref.sum, tgt.sum));
            for (const auto& group : result.groups) {
                CHECK_FALSE(group.ambiguous());
                CHECK(group.confidence > 0.9);
            }
        }
}

TEST_CASE("match_by_structure: propagates ambiguity to the consumers of an ambiguous pick") {
    // Both branches conv -> bn -> add: nothing structural tells them apart.
    // The convs are ambiguous with each other; the batch norms, paired
    // because of that guess, are ambiguous too (each names the other
    // branch's batch norm) at the same lowered confidence, so the value
    // repair can re-pair them and a report never names them as confident
    // origins. The add does not depend on the guess.
    const auto ref = make_downsample_block(false, "c_main", "c_short", true);
    for (bool shortcut_first : {false, true}) {
        CAPTURE(shortcut_first);
        const auto tgt = make_downsample_block(shortcut_first, "t_a", "t_b", true);
        const auto result = numgap::match_by_structure(ref.graph, tgt.graph);
        const auto* conv = group_of(result, ref.c1);
        const auto* bn = group_of(result, ref.b1);
        const auto* short_conv = group_of(result, ref.dc);
        const auto* short_bn = group_of(result, ref.db);
        REQUIRE(conv != nullptr);
        REQUIRE(bn != nullptr);
        REQUIRE(short_conv != nullptr);
        REQUIRE(short_bn != nullptr);
        CHECK(conv->ambiguous_with.size() == 1);
        CHECK(short_conv->ambiguous_with.size() == 1);
        // bn follows conv's pick, and names the other branch's bn.
        const bool conv_on_main = conv->target_output_node == tgt.c1;
        CHECK(bn->target_output_node == (conv_on_main ? tgt.b1 : tgt.db));
        CHECK(bn->ambiguous_with == std::vector<std::size_t>{conv_on_main ? tgt.db : tgt.b1});
        CHECK(short_bn->ambiguous_with == std::vector<std::size_t>{bn->target_output_node});
        CHECK(bn->confidence == doctest::Approx(0.5));
        CHECK(short_bn->confidence == doctest::Approx(0.5));
        CHECK(paired(result, ref.sum, tgt.sum));
        CHECK_FALSE(group_of(result, ref.sum)->ambiguous());
        CHECK_FALSE(group_of(result, ref.out)->ambiguous());
    }
}
TEST_CASE("match_by_structure: decomposition does not swallow what follows an unknown op") {
    // The reference spells its ops in a vocabulary nothing recognises
    // ("MyConvOp"), the target in aten's: a Fire module's squeeze conv
    // finds no compatible candidate. The decomposition finder must not take
    // the squeeze's relu, both expand convs, their relus and the concat (the
    // counterparts of what follows the squeeze, reached through the unknown
    // ops; and a fan-out into parallel branches of one op) as "the lowering
    // of the squeeze" (before: one group of 8 target nodes). With the concat
    // spelled in the unknown vocabulary too, only the fan-out rule sees it.
    for (bool concat_known : {true, false}) {
        CAPTURE(concat_known);
        numgap::basic_graph ref, tgt;
        const numgap::shape_type in{1, 8, 8, 8}, squeezed{1, 4, 8, 8}, expanded{1, 8, 8, 8}, joined{1, 16, 8, 8};
        for (auto* g : {&ref, &tgt}) {
            const bool r = g == &ref;
            const char* conv = r ? "MyConvOp" : "aten.convolution.default";
            const char* relu = r ? "MyReluOp" : "aten.relu.default";
            const auto x = add(*g, "x", "input", {}, in);
            const auto sq = add(*g, r ? "squeeze" : "t0", conv, {x}, squeezed);
            const auto sqr = add(*g, r ? "squeeze_relu" : "t1", relu, {sq}, squeezed);
            const auto e1 = add(*g, r ? "expand1x1" : "t2", conv, {sqr}, expanded);
            const auto e3 = add(*g, r ? "expand3x3" : "t3", conv, {sqr}, expanded);
            const auto e1r = add(*g, r ? "expand1x1_relu" : "t4", relu, {e1}, expanded);
            const auto e3r = add(*g, r ? "expand3x3_relu" : "t5", relu, {e3}, expanded);
            const auto cat = add(*g, r ? "cat" : "t6", r ? (concat_known ? "cat" : "MyCatOp") : "aten.cat.default", {e1r, e3r}, joined);
            add(*g, r ? "next_squeeze" : "t7", conv, {cat}, squeezed);
        }
        const auto result = numgap::match_by_structure(ref, tgt);
        // Target nodes 3..8: the expands, their relus, the concat, the next squeeze.
        for (const auto& group : result.groups) {
            if (group.target_nodes.size() < 2) continue;
            INFO("decomposed group of " << group.target_nodes.size() << " target nodes");
            CHECK(group.target_nodes.size() <= 2);
            for (auto node : group.target_nodes) CHECK(node <= 2);
        }
    }
}

TEST_CASE("match_by_structure: decomposition looks for what follows r through unknown ops") {
    // x -> r -> u1 -> u2 -> sigmoid -> u3 with r, u1, u2, u3 in a vocabulary
    // nothing recognises; the target spells them conv/relu/conv/conv. The
    // sigmoid, three ops below r but only one recognised op below it, is
    // what follows r: no decomposition of r may contain its counterpart
    // (before: r took the whole chain as its lowering).
    numgap::basic_graph ref, tgt;
    const numgap::shape_type shape{1, 8, 4, 4};
    add(ref, "x", "input", {}, shape);
    add(ref, "r", "MyConvOp", {0}, shape);
    add(ref, "u1", "MyReluOp", {1}, shape);
    add(ref, "u2", "MyConvOp", {2}, shape);
    add(ref, "sigmoid", "aten.sigmoid.default", {3}, shape);
    add(ref, "u3", "MyConvOp", {4}, shape);
    add(tgt, "x", "input", {}, shape);
    add(tgt, "t1", "aten.convolution.default", {0}, shape);
    add(tgt, "t2", "aten.relu.default", {1}, shape);
    add(tgt, "t3", "aten.convolution.default", {2}, shape);
    const auto sigmoid = add(tgt, "t4", "aten.sigmoid.default", {3}, shape);
    add(tgt, "t5", "aten.convolution.default", {4}, shape);
    const auto result = numgap::match_by_structure(ref, tgt);
    for (const auto& group : result.groups) {
        if (group.target_nodes.size() < 2) continue;
        CHECK(std::count(group.target_nodes.begin(), group.target_nodes.end(), sigmoid) == 0);
    }
}
} // TEST_SUITE("match")
