// Weights read in place: WeightMatrix's layouts (owned, mapped, transposed, sliced) all
// compute x W^T, and a checkpoint's F32 tensors are views into the mapped file while
// other dtypes are converted once; loads report progress and stop when cancelled.

#include "core/base/load_control.h"
#include "core/models/hf/image_processor.h"
#include "core/models/hf/tensors.h"
#include "core/models/hf/weight_files.h"
#include "core/models/model_registry.h"
#include "core/tensor/safetensors.h"
#include "core/tensor/weight_matrix.h"
#include "test_support.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

using namespace headscope;

namespace {

Matrix numbered(Eigen::Index rows, Eigen::Index cols) {
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = 0.25f * static_cast<float>(i % 13) - 1.0f;
    return m;
}

Matrix product(const WeightMatrix& w, const Matrix& x) {
    Matrix y(x.rows(), w.rows());
    w.multiply(x, y);
    return y;
}

const std::string checkpoints = std::string(HEADSCOPE_GOLDEN_DIR) + "/../checkpoints";

}   // namespace

TEST_CASE("WeightMatrix: owned, viewed, transposed and sliced weights all compute x W^T") {
    const Matrix W = numbered(6, 4);   // [out, in]
    const Matrix x = numbered(3, 4).array() + 0.5f;
    const Matrix expected = x * W.transpose();

    const WeightMatrix owned = W;
    CHECK_FALSE(owned.is_view());
    CHECK(product(owned, x).isApprox(expected, 1e-6f));

    // The same values in memory as [out, in] rows 7 floats apart, and as [in, out].
    auto padded = std::make_shared<std::vector<float>>(6 * 7, -99.0f);
    for (Eigen::Index r = 0; r < 6; ++r)
        for (Eigen::Index c = 0; c < 4; ++c) (*padded)[static_cast<std::size_t>(r * 7 + c)] = W(r, c);
    const WeightMatrix strided = WeightMatrix::view(padded, padded->data(), 6, 4, 7, false);
    auto transposed_values = std::make_shared<Matrix>(W.transpose());
    const WeightMatrix transposed = WeightMatrix::view(transposed_values, transposed_values->data(), 4, 6, 6, true);
    for (const WeightMatrix* w : {&strided, &transposed}) {
        CHECK(w->is_view());
        CHECK(w->rows() == 6);
        CHECK(w->cols() == 4);
        CHECK(w->to_matrix() == W);
        CHECK(*w == owned);
        CHECK(product(*w, x).isApprox(expected, 1e-6f));
        // Rows 2..4 of [out, in], as GPT-2's q / k / v are cut from c_attn.
        const WeightMatrix slice = w->middle_rows(2, 3);
        CHECK(slice.is_view());
        CHECK(slice.to_matrix() == W.middleRows(2, 3));
        CHECK(product(slice, x).isApprox(x * W.middleRows(2, 3).transpose(), 1e-6f));
        CHECK_THROWS_AS(w->middle_rows(4, 3), Error);
    }
    CHECK(owned.middle_rows(1, 2).to_matrix() == W.middleRows(1, 2));

    WeightMatrix editable = W;
    CHECK(product(editable, x).isApprox(expected, 1e-6f));   // its panels are made here...
    const WeightMatrix before_edit = editable;               // ...and shared by this copy
    editable.values()(0, 0) = 7.0f;
    CHECK(editable.to_matrix()(0, 0) == 7.0f);
    Matrix W_edited = W;
    W_edited(0, 0) = 7.0f;
    // ...but an edit gives the edited weight panels of its own; the copy keeps the old.
    CHECK(product(editable, x).isApprox(x * W_edited.transpose(), 1e-6f));
    CHECK(product(before_edit, x).isApprox(expected, 1e-6f));
    WeightMatrix view_copy = strided;
    CHECK_THROWS_AS(view_copy.values(), Error);
    CHECK_FALSE(strided == WeightMatrix(editable));
}

TEST_CASE("HfTensorTable: F32, F16 and BF16 weights are read in place from the mapped file, F64 ones converted once") {
    test::TempDir dir;
    const Matrix a = numbered(3, 5);   // F32, a Linear [out 3, in 5]
    const Matrix b = numbered(5, 2);   // F32, a Conv1D stored [in 5, out 2]
    const Matrix c = numbered(2, 2);   // F16 (values exact in half precision)
    std::vector<std::uint16_t> c_half;
    for (Eigen::Index i = 0; i < c.size(); ++i) c_half.push_back(float_to_half(c.data()[i]));
    std::vector<std::uint16_t> d_bf16;   // a, as BF16 (values exact in it)
    for (Eigen::Index i = 0; i < a.size(); ++i) d_bf16.push_back(float_to_bfloat16(a.data()[i]));
    const std::vector<double> e_f64 = {1.0, -0.5, 0.25, 2.0};
    const Vector bias = Vector::LinSpaced(2, 0.5f, 1.5f);
    write_safetensors(dir.file("model.safetensors"),
                      {tensor_f32("a.weight", {3, 5}, {a.data(), static_cast<std::size_t>(a.size())}),
                       tensor_f32("b.weight", {5, 2}, {b.data(), static_cast<std::size_t>(b.size())}),
                       tensor_f32("b.bias", {2}, {bias.data(), 2}),
                       {"c.weight", DType::F16, {2, 2}, std::as_bytes(std::span(c_half))},
                       {"d.weight", DType::BF16, {3, 5}, std::as_bytes(std::span(d_bf16))},
                       {"e.weight", DType::F64, {2, 2}, std::as_bytes(std::span(e_f64))}});

    const HfWeights weights = HfWeights::open(dir.path().string());
    std::vector<double> progress;
    LoadControl control;
    control.on_progress = [&](double f) { progress.push_back(f); };
    HfTensorTable table(weights, "", dir.path().string(), control);

    const WeightMatrix wa = table.weight("a.weight", 3, 5, "test");
    const auto* a_bytes = weights.tensors().at("a.weight").tensor->bytes.data();
    CHECK(static_cast<const void*>(wa.stored().data()) == static_cast<const void*>(a_bytes));
    CHECK(wa.to_matrix() == a);

    const Linear conv = table.conv1d("b", 5, 2, "test");
    CHECK(conv.weight.transposed());
    CHECK(static_cast<const void*>(conv.weight.stored().data()) ==
          static_cast<const void*>(weights.tensors().at("b.weight").tensor->bytes.data()));
    CHECK(conv.weight.to_matrix() == b.transpose());

    // 16-bit weights keep their width: no float copy (stored() refuses), the same products.
    const WeightMatrix wc = table.weight("c.weight", 2, 2, "test");
    CHECK(wc.element() == DType::F16);
    CHECK(wc.is_view());
    CHECK_THROWS_AS(wc.stored(), Error);
    CHECK(wc.to_matrix() == c);
    const WeightMatrix wd = table.weight("d.weight", 3, 5, "test");
    CHECK(wd.element() == DType::BF16);
    CHECK(wd == wa);
    CHECK(wd.panels().element() == DType::BF16);
    const Matrix x = numbered(4, 5).array() * 0.37f;
    CHECK(product(wd, x) == product(WeightMatrix(a), x));

    const WeightMatrix we = table.weight("e.weight", 2, 2, "test");
    CHECK(we.element() == DType::F32);
    CHECK(static_cast<const void*>(we.stored().data()) !=
          static_cast<const void*>(weights.tensors().at("e.weight").tensor->bytes.data()));
    CHECK(we.to_matrix() == (Matrix(2, 2) << 1.0f, -0.5f, 0.25f, 2.0f).finished());

    // Progress: from 0, rising, to 1 once every byte is taken.
    REQUIRE(progress.size() >= 2);
    CHECK(progress.front() == 0.0);
    for (std::size_t i = 1; i < progress.size(); ++i) CHECK(progress[i] >= progress[i - 1]);
    CHECK(progress.back() == doctest::Approx(1.0));
}

TEST_CASE("A mapped weight's pages, handed back after its first product, read the same values again") {
    test::TempDir dir;
    const Matrix w = numbered(40, 100);   // 16,000 bytes: whole pages of the mapping
    write_safetensors(dir.file("model.safetensors"),
                      {tensor_f32("w.weight", {40, 100}, {w.data(), static_cast<std::size_t>(w.size())})});
    const HfWeights weights = HfWeights::open(dir.path().string());
    HfTensorTable table(weights, "", dir.path().string(), LoadControl{});
    const WeightMatrix mapped = table.weight("w.weight", 40, 100, "test");
    const Matrix x = numbered(5, 100).array() + 0.5f;
    const Matrix expected = x * w.transpose();
    CHECK(product(mapped, x).isApprox(expected, 1e-6f));   // panels made, the file's pages released
    CHECK(mapped.to_matrix() == w);                        // read again from the file
    CHECK(product(mapped, x).isApprox(expected, 1e-6f));
    CHECK(product(mapped.middle_rows(10, 20), x).isApprox(x * w.middleRows(10, 20).transpose(), 1e-6f));
}

// The resident kB of the mapping that holds `address` (smaps' "Rss:"); -1 when unknown.
long resident_kb_at(const void* address) {
    const std::string line = test::smaps_line_at(address, "Rss:");
    return line.empty() ? -1 : std::stol(line.substr(4));
}

TEST_CASE("Embedding rows gathered from a weight: its rows in order, and a mapped file's pages handed back") {
    test::TempDir dir;
    Matrix w(512, 64);   // 128 KiB: 32 whole pages of the mapping, every value distinct
    for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = 0.001f * static_cast<float>(i);
    write_safetensors(dir.file("model.safetensors"),
                      {tensor_f32("wte.weight", {512, 64}, {w.data(), static_cast<std::size_t>(w.size())})});
    const HfWeights weights = HfWeights::open(dir.path().string());
    HfTensorTable table(weights, "", dir.path().string(), LoadControl{});
    const WeightMatrix mapped = table.weight("wte.weight", 512, 64, "test");
    REQUIRE(mapped.is_view());
    const std::vector<std::int64_t> ids{5, 0, 511, 5, 300};

    // Reading rows in place maps pages of the file into this process...
    const WeightMatrix::Stored stored = mapped.stored();
    float sum = 0.0f;
    for (const std::int64_t id : ids) sum += stored.row(id).sum();
    CHECK(std::isfinite(sum));
    const long touched = resident_kb_at(stored.data() + 300 * 64);

    // ...gather_rows copies the same rows and hands those pages back.
    const Matrix rows = mapped.gather_rows(ids);
    REQUIRE(rows.rows() == 5);
    REQUIRE(rows.cols() == 64);
    for (std::size_t i = 0; i < ids.size(); ++i) CHECK(rows.row(static_cast<Eigen::Index>(i)) == w.row(ids[i]));
    const long after = resident_kb_at(stored.data() + 300 * 64);
    if (touched < 0) {
        MESSAGE("no /proc/self/smaps here: the pages handed back are not checked");
    } else {
        CHECK(touched >= 8);   // at least the pages of the rows read (two rows a page)
        CHECK(after <= 8);     // at most the partial pages at the tensor's ends (the header's, the file's last)
        CHECK(after < touched);
    }
    CHECK(mapped.gather_rows(ids) == rows);   // read again from the file, the same

    CHECK_THROWS_WITH_AS(mapped.gather_rows(std::vector<std::int64_t>{3, 512}), "weight rows: id 512 outside [0, 512)",
                         Error);
    CHECK_THROWS_WITH_AS(mapped.gather_rows(std::vector<std::int64_t>{-1}), "weight rows: id -1 outside [0, 512)",
                         Error);
    CHECK(mapped.gather_rows({}).rows() == 0);

    // Owned and transposed ([in, out] in memory, as GPT-2's Conv1D) weights: row r of [out, in].
    const Matrix small = w.topRows(6).leftCols(4);   // [out 6, in 4]
    const WeightMatrix owned(small);
    CHECK(owned.gather_rows(std::vector<std::int64_t>{4, 1}) ==
          Matrix(small(std::vector<Eigen::Index>{4, 1}, Eigen::all)));
    const Matrix stored_t = small.transpose();   // [in 4, out 6]
    const WeightMatrix transposed = WeightMatrix::view(nullptr, stored_t.data(), 4, 6, 6, true);
    CHECK(transposed.gather_rows(std::vector<std::int64_t>{2, 5}) ==
          Matrix(small(std::vector<Eigen::Index>{2, 5}, Eigen::all)));
}

TEST_CASE("A mapped head multiplied a slab at a time gives its panels' products bit for bit, its pages handed back") {
    // Two slabs of 4,096 rows and a short remainder that joins the second; a last panel
    // part full (8,292 = 518 x 16 + 4): every case of WeightMatrix::multiply_streamed.
    const Eigen::Index out = 8292, in = 70;
    Matrix w(out, in);
    for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = std::sin(0.37f * static_cast<float>(i % 1009)) * 0.5f;
    std::vector<std::uint16_t> bf16;
    for (Eigen::Index i = 0; i < w.size(); ++i) bf16.push_back(float_to_bfloat16(w.data()[i]));
    test::TempDir f32_dir, bf16_dir;
    write_safetensors(f32_dir.file("model.safetensors"),
                      {tensor_f32("head.weight", {out, in}, {w.data(), static_cast<std::size_t>(w.size())})});
    write_safetensors(bf16_dir.file("model.safetensors"),
                      {{"head.weight", DType::BF16, {out, in}, std::as_bytes(std::span(bf16))}});
    for (const test::TempDir* dir : {&f32_dir, &bf16_dir}) {
        for (const Eigen::Index rows : {1, 7}) {
            CAPTURE(rows);
            const HfWeights weights = HfWeights::open(dir->path().string());
            HfTensorTable table(weights, "", dir->path().string(), LoadControl{});
            const WeightMatrix streamed = table.weight("head.weight", out, in, "test");
            const Matrix x = numbered(rows, in).array() * 0.31f;
            Matrix y(rows, out);
            streamed.multiply_streamed(x, y);
            const long resident = resident_kb_at(weights.tensors().at("head.weight").tensor->bytes.data());
            // Read, then handed back: all but the partial pages at its ends and between slabs.
            if (resident >= 0) CHECK(resident <= 16);
            const WeightMatrix kept = table.weight("head.weight", out, in, "test");   // its own panels
            CHECK(y == product(kept, x));
            // Once its panels are made, the same weight uses them.
            (void)streamed.panels();
            Matrix again(rows, out);
            streamed.multiply_streamed(x, again);
            CHECK(again == y);
        }
    }
}

TEST_CASE("Mapped weights outlive the table and the HfWeights they came from") {
    std::unique_ptr<Model> model = open_model(checkpoints + "/gpt2_tiny", {});
    const ModelInput input = model->encode_ids(std::vector<std::int64_t>{1, 2, 3});
    const ModelTrace first = model->forward(input, {});
    const ModelTrace again = model->forward(input, {});
    CHECK(first.logits.get() == again.logits.get());
    CHECK(first.logits.get().allFinite());
}

TEST_CASE("A load stops with LoadCancelled when asked, at the start or midway") {
    std::atomic<bool> cancel{true};
    LoadControl control;
    control.cancel = &cancel;
    CHECK_THROWS_AS(open_model(checkpoints + "/gpt2_tiny", {}, control), LoadCancelled);

    // Cancelled once a third of the bytes are in: the next tensor stops it.
    cancel = false;
    double last = 0.0;
    control.on_progress = [&](double f) {
        last = f;
        if (f > 0.33) cancel = true;
    };
    CHECK_THROWS_AS(open_model(checkpoints + "/vit_tiny", {}, control), LoadCancelled);
    CHECK(last > 0.33);
    CHECK(last < 1.0);

    // Untouched, the same load completes and reports 1.
    cancel = false;
    control.on_progress = [&](double f) { last = f; };
    CHECK(open_model(checkpoints + "/vit_tiny", {}, control) != nullptr);
    CHECK(last == doctest::Approx(1.0));
}

TEST_CASE("A checkpoint rewritten on disk after loading is refused in one line, never read (no SIGBUS)") {
    test::TempDir dir;
    const std::filesystem::path folder = dir.path() / "gpt2";
    std::filesystem::copy(checkpoints + "/gpt2_tiny", folder);
    const std::unique_ptr<Model> model = open_model(folder.string(), {});
    const ModelInput input = model->encode_ids(std::vector<std::int64_t>{1, 2, 3});
    CHECK_NOTHROW(model->forward(input, {}));

    // Cut short in place, as saving into the same folder does: the mapped pages are gone.
    std::filesystem::resize_file(folder / "model.safetensors", 4096);
    try {
        (void)model->forward(input, {});
        FAIL("a forward over a truncated mapping must be refused");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("changed on disk since it was loaded; open the model again") !=
              std::string::npos);
    }
    CHECK_THROWS_AS(model->encode_ids(std::vector<std::int64_t>{1}), Error);

    // Gone altogether: refused too.
    std::filesystem::remove(folder / "model.safetensors");
    CHECK_THROWS_AS(model->forward(input, {}), Error);
}

// Found by tests/fuzz/fuzz_checkpoint: a preprocessor_config.json whose rescale_factor (or
// a tiny image_std) takes pixels past float's range loaded, and every map came out NaN.
TEST_CASE("preprocessor configs that make pixels non-finite are refused (fuzz regression)") {
    test::TempDir dir;
    const std::string path = dir.file("preprocessor_config.json");
    const auto refusal = [&](const std::string& json) {
        test::write_bytes(path, json);
        try {
            read_hf_image_processor_config(path, "vit");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(refusal(R"({"rescale_factor": 1e38})") ==
          path + ": rescale_factor, image_mean and image_std take pixel values past float's range (channel 0: "
                 "(255 * 1e+38 - 0.5) / 0.5 is not finite); expected values that keep them finite");
    CHECK(refusal(R"({"image_std": [0.5, 1e-45, 0.5]})").find("(channel 1: (0 * 0.00392157 - 0.5) / 1.4013e-45") !=
          std::string::npos);
    // Without normalising or rescaling, neither can overflow; ImageNet's constants are fine.
    CHECK(refusal(R"({"image_std": 1e-45, "do_normalize": false})") == "accepted");
    CHECK(refusal(R"({"rescale_factor": 1e38, "do_rescale": false})") == "accepted");
    CHECK(refusal(R"({"image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]})") == "accepted");
}
