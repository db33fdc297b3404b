#pragma once
// What every patch-based image family (ViT, DeiT, DINO, DINOv2) does alike between a
// picture and its patch embeddings: the picture cut or shrunk to its own resolution, the
// processor's pixels rescaled and normalised and cut into patches by the patch convolution,
// the labels of the tokens, and the processor's lines for `info`.

#include "core/image/image.h"
#include "core/models/hf/image_processor.h"
#include "core/models/model.h"
#include "core/tensor/matrix.h"
#include "core/tensor/weight_matrix.h"

#include <string>
#include <utility>
#include <vector>

namespace headscope {

// The picture for ImageOptions::own_resolution: shrunk (keeping its aspect, with `resample`)
// to at most `max_patches` patches of P px when larger, then cut to whole patches at the
// right and bottom, as DINO's script does.
RgbImage own_resolution_pixels(const RgbImage& image, int P, int max_patches, Resample resample);

// `pixels` cut at the right and bottom to whole patches of P px: what a stride-P convolution
// reads of a picture (it drops the remainders).
RgbImage whole_patches(RgbImage pixels, int P);

// The patch convolution's output for `pixels` as `p` rescales and normalises them:
// Conv2d(3, E, P, stride P) with `weight` [E, 3 P P] and `bias` [E]: [N, E], row-major over
// the grid (pixels.width / P columns).
Matrix normalized_patches(const RgbImage& pixels, const HfImageProcessorConfig& p, int P, const WeightMatrix& weight,
                          const Vector& bias);

// `prefix` labels, then p0 .. p(n_patches - 1).
std::vector<std::string> patch_labels(std::vector<std::string> prefix, Eigen::Index n_patches);

// The processor's settings as `info` lists them (processor, resize, center_crop, rescale, normalize).
std::vector<std::pair<std::string, std::string>> processor_settings(const HfImageProcessorConfig& p);

// Refuses input embeddings that are not `n_prefix` tokens and at least one patch of the
// model's width, naming the model.
void check_patch_input(const ModelInput& input, const ModelInfo& info, int n_prefix);

// Refuses a processor (read from `path`) that hands the model pictures of another size than
// config.json's image_size, where it makes one size of every picture, and one that resizes by
// the shortest edge without cropping (ViT's models take one size).
void check_processor_output(const std::string& path, const HfImageProcessorConfig& p, int image_size);

}   // namespace headscope
