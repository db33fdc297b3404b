#include "core/analysis/head_similarity.h"

#include "core/analysis/head_compare.h"
#include "core/base/error.h"
#include "core/base/memory_room.h"

#include <Eigen/Eigenvalues>

#include <cmath>
#include <string>

namespace headscope {

namespace {

std::string shape_text(const Matrix& m) {
    return "[" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + "]";
}

void check_square(const Matrix& m, const char* what) {
    if (m.rows() != m.cols())
        throw Error(std::string(what) + ": the distance matrix is " + shape_text(m) + ", not square");
}

}   // namespace

Matrix js_divergence_matrix(const std::vector<const Matrix*>& maps, const LoadControl& control) {
    const auto N = static_cast<Eigen::Index>(maps.size());
    for (Eigen::Index i = 1; i < N; ++i) {
        if (maps[static_cast<std::size_t>(i)]->rows() != maps[0]->rows() ||
            maps[static_cast<std::size_t>(i)]->cols() != maps[0]->cols()) {
            throw Error("head similarity: map " + std::to_string(i) + " is " +
                        shape_text(*maps[static_cast<std::size_t>(i)]) + ", map 0 is " + shape_text(*maps[0]));
        }
    }
    control.report(0.0);
    // Each map's own row terms once (N passes), then one pass per pair (N (N - 1) / 2).
    std::vector<RowEntropies> entropies;
    entropies.reserve(maps.size());
    for (const Matrix* map : maps) entropies.push_back(row_entropies(*map));
    Matrix divergence = Matrix::Zero(N, N);   // [N, N]
    const double n_pairs = 0.5 * static_cast<double>(N) * static_cast<double>(N - 1);
    double pairs_done = 0.0;
    for (Eigen::Index i = 0; i < N; ++i) {
        const auto a = static_cast<std::size_t>(i);
        for (Eigen::Index j = i + 1; j < N; ++j) {
            const auto b = static_cast<std::size_t>(j);
            const auto js = static_cast<float>(mean_js_divergence(*maps[a], entropies[a], *maps[b], entropies[b]).bits);
            divergence(i, j) = js;
            divergence(j, i) = js;
        }
        pairs_done += static_cast<double>(N - 1 - i);
        control.report(n_pairs > 0.0 ? pairs_done / n_pairs : 1.0);
    }
    return divergence;
}

std::vector<int> average_linkage_order(const Matrix& distances) {
    check_square(distances, "clustering");
    const auto N = static_cast<int>(distances.rows());
    // Cluster c lives in slot c, the lowest original index it holds: merging slots a < b
    // into a keeps that true, so "smaller indices first" on ties is "smaller slots first".
    // The matrix is symmetrised in double, so float asymmetries cannot pick a side.
    const Eigen::MatrixXd cast = distances.cast<double>();
    Eigen::MatrixXd d = 0.5 * (cast + cast.transpose());
    std::vector<std::vector<int>> leaves(static_cast<std::size_t>(N));
    std::vector<int> size(static_cast<std::size_t>(N), 1);
    std::vector<bool> active(static_cast<std::size_t>(N), true);
    for (int i = 0; i < N; ++i) leaves[static_cast<std::size_t>(i)] = {i};
    // O(N^3) in all: 144 heads take well under a millisecond, 1200 (GPT-2 XL) a second or so.
    for (int step = 0; step + 1 < N; ++step) {
        int best_a = -1, best_b = -1;
        double best = 0.0;
        for (int a = 0; a < N; ++a) {
            if (!active[static_cast<std::size_t>(a)]) continue;
            for (int b = a + 1; b < N; ++b) {
                if (!active[static_cast<std::size_t>(b)]) continue;
                if (best_a < 0 || d(a, b) < best) {
                    best = d(a, b);
                    best_a = a;
                    best_b = b;
                }
            }
        }
        const auto a = static_cast<std::size_t>(best_a), b = static_cast<std::size_t>(best_b);
        // UPGMA: the merged cluster's distance to c is the mean over all leaf pairs, i.e.
        // the size-weighted mean of its two parts' distances.
        const double wa = size[a], wb = size[b];
        for (int c = 0; c < N; ++c) {
            if (!active[static_cast<std::size_t>(c)] || c == best_a || c == best_b) continue;
            const double merged = (wa * d(best_a, c) + wb * d(best_b, c)) / (wa + wb);
            d(best_a, c) = merged;
            d(c, best_a) = merged;
        }
        leaves[a].insert(leaves[a].end(), leaves[b].begin(), leaves[b].end());
        size[a] += size[b];
        active[b] = false;
    }
    return N > 0 ? leaves[0] : std::vector<int>{};
}

Matrix classical_mds(const Matrix& distances, int dims) {
    check_square(distances, "MDS");
    if (dims < 1) throw Error("MDS: " + std::to_string(dims) + " dimensions asked for, at least 1 needed");
    const Eigen::Index N = distances.rows();
    Matrix coordinates = Matrix::Zero(N, dims);   // [N, dims]
    if (N == 0) return coordinates;
    // B = -1/2 J D^2 J with J = I - 11^T / N: double centring of the squared distances.
    const Eigen::MatrixXd d2 = distances.cast<double>().array().square().matrix();
    const Eigen::VectorXd row_mean = d2.rowwise().mean();
    const Eigen::RowVectorXd col_mean = d2.colwise().mean();
    const double mean = d2.mean();
    Eigen::MatrixXd b = d2;
    b.colwise() -= row_mean;
    b.rowwise() -= col_mean;
    b.array() += mean;
    b *= -0.5;
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(b);
    if (solver.info() != Eigen::Success) throw Error("MDS: the eigen-decomposition did not converge");
    // Eigen sorts eigenvalues ascending: the largest are at the end.
    for (int k = 0; k < dims && k < N; ++k) {
        const Eigen::Index at = N - 1 - k;
        const double lambda = solver.eigenvalues()(at);
        if (!(lambda > 0.0)) continue;
        Eigen::VectorXd axis = solver.eigenvectors().col(at) * std::sqrt(lambda);
        // The sign is arbitrary; fixing the largest coordinate positive keeps the picture
        // from flipping between runs that differ only in rounding.
        Eigen::Index largest = 0;
        axis.cwiseAbs().maxCoeff(&largest);
        if (axis(largest) < 0.0) axis = -axis;
        coordinates.col(k) = axis.cast<float>();
    }
    return coordinates;
}

HeadSimilarity head_similarity(const HeadMaps& maps, const HeadMask& left_out, const LoadControl& control) {
    if (left_out.layers() != 0 || left_out.heads() != 0) {
        bool fits = left_out.layers() == maps.n_layers();
        for (Eigen::Index l = 0; fits && l < maps.n_layers(); ++l) fits = left_out.heads() == maps.n_heads(l);
        if (!fits) throw Error("head similarity: the heads to leave out are not shaped [layers][heads] like the trace");
    }
    HeadSimilarity result;
    double computed_values = 0;   // of maps a streamed run computes again
    for (Eigen::Index l = 0; l < maps.n_layers(); ++l) {
        for (Eigen::Index h = 0; h < maps.n_heads(l); ++h) {
            if (left_out.off(l, h)) continue;
            result.heads.emplace_back(static_cast<int>(l), static_cast<int>(h));
            computed_values += static_cast<double>(maps.rows(l, h)) * static_cast<double>(maps.cols(l, h));
        }
    }
    std::vector<Matrix> computed;
    std::vector<const Matrix*> pointers;
    if (maps.computes_maps()) {
        check_memory_room(computed_values * sizeof(float),
                          "head similarity: " + std::to_string(result.heads.size()) + " maps held together",
                          "choose fewer heads or a shorter input");
        computed.resize(result.heads.size());
    }
    for (std::size_t i = 0; i < result.heads.size(); ++i) {
        Matrix scratch;
        const Matrix& map = maps.map(result.heads[i].first, result.heads[i].second, scratch);
        if (&map != &scratch) {
            pointers.push_back(&map);   // kept in the trace
        } else {
            computed[i] = std::move(scratch);
            pointers.push_back(&computed[i]);
        }
    }
    result.divergence = js_divergence_matrix(pointers, control);
    result.order = average_linkage_order(result.divergence);
    result.mds = classical_mds(result.divergence);
    return result;
}

}   // namespace headscope
