#pragma once
// JSON, all of it: the DOM (io/json/value.hpp), the strict parser for
// graph.json and safetensors headers (io/json/parser.hpp), UTF-8 validation
// (io/json/utf8.hpp), the piecewise reader for documents too large for one
// tree (io/json/stream.hpp) and the one streaming writer every JSON numgap emits
// goes through (io/json/writer.hpp). Include a part directly to take less.
#include <numgap/io/json/parser.hpp>
#include <numgap/io/json/stream.hpp>
#include <numgap/io/json/utf8.hpp>
#include <numgap/io/json/value.hpp>
#include <numgap/io/json/writer.hpp>
