// Pins down the ready-made name normaliser: output-index suffixes, separator
// sanitisation, optional case folding; names that merely end in digits keep
// them; append_to writes the same key into a shared buffer.
#include <doctest/doctest.h>

#include <string>

#include <numgap/match/common_name_normalizer.hpp>

TEST_SUITE("match") {
TEST_CASE("common_name_normalizer: suffixes and separators") {
    const numgap::common_name_normalizer normalize;
    CHECK(normalize("layer1/conv_output_0") == "layer1_conv");
    CHECK(normalize("layer1.conv:0") == "layer1_conv");
    CHECK(normalize("layer1_conv@0") == "layer1_conv");
    CHECK(normalize("/layer1//conv/") == "layer1_conv");
    CHECK(normalize("conv2") == "conv2"); // digits without a marker are part of the name
    CHECK(normalize("Conv") == "Conv");
    CHECK(normalize("") == "");
    CHECK(numgap::common_name_normalizer{false}("Layer1/Conv") == "layer1_conv");
}

TEST_CASE("common_name_normalizer: append to matches the call operator") {
    // match_by_name uses append_to to write keys into one arena: it must
    // produce exactly operator()'s key, and trim/collapse separators only
    // within the appended part, never touching what the buffer held.
    const numgap::common_name_normalizer normalize;
    for (const char* name : {"layer1/conv_output_0", "/layer1//conv/", "__", "", "x:0", "a-b c.d", "conv2"}) {
        std::string out = "prefix_";
        normalize.append_to(name, out);
        CHECK(out == "prefix_" + normalize(name));
    }
    std::string folded = "Keep_";
    numgap::common_name_normalizer{false}.append_to("Layer1/Conv", folded);
    CHECK(folded == "Keep_layer1_conv");
}

TEST_CASE("common_name_normalizer: rules can be chosen one by one") {
    numgap::common_name_normalizer suffixes_only;
    suffixes_only.unify_separators = false;
    CHECK(suffixes_only("layer1/conv@3") == "layer1/conv");
    CHECK(suffixes_only("layer1/conv_output_0") == "layer1/conv");
    CHECK(suffixes_only("/a//b_") == "/a//b_");
    numgap::common_name_normalizer separators_only;
    separators_only.strip_output_suffixes = false;
    CHECK(separators_only("layer1/conv@3") == "layer1_conv@3");
    numgap::common_name_normalizer case_only{false, false, false};
    CHECK(case_only("Layer1/Conv:0") == "layer1/conv:0");
}
} // TEST_SUITE("match")
