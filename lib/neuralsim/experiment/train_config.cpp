#include "neuralsim/experiment/train_config.hpp"

#include "neuralsim/experiment/estimation_config.hpp"

namespace neuralsim {

const char* trained_model_name(TrainedModel m) {
  switch (m) {
    case TrainedModel::kHybrid: return "hybrid";
    case TrainedModel::kMlp: return "mlp";
    case TrainedModel::kLstm: return "lstm";
  }
  return "?";
}

namespace {

constexpr long long kMaxEpochs = 10000000;
constexpr long long kMaxSteps = 100000000;

BaselineSpec read_baseline(const Config& train, TrainedModel model) {
  BaselineSpec b;
  if (!train.has("baseline")) {
    b.hidden = model == TrainedModel::kLstm ? std::vector<int>{32} : std::vector<int>{64, 64};
    return b;
  }
  const Config c = train.at("baseline");
  c.check_known_keys({"hidden", "parameters", "predict_delta", "seed"});
  if (c.has("hidden") && c.has("parameters")) c.fail("parameters", "give either hidden or parameters, not both");
  if (c.has("hidden")) {
    const std::vector<double> h = c.get<std::vector<double>>("hidden");
    if (h.empty()) c.fail("hidden", "expected at least one width");
    if (model == TrainedModel::kLstm && h.size() != 1) c.fail("hidden", "an LSTM has one hidden size: [n]");
    for (double w : h) {
      if (!(w >= 1 && w <= 4096 && w == static_cast<int>(w))) c.fail("hidden", "widths are integers in [1, 4096]");
      b.hidden.push_back(static_cast<int>(w));
    }
  } else {
    b.parameters = c.get_int_in_range("parameters", 0, 1, 100000000);
    if (b.parameters == 0) c.fail("parameters", "missing: give hidden or parameters");
  }
  b.predict_delta = c.get_or<bool>("predict_delta", true);
  b.seed = static_cast<std::uint64_t>(c.get_int_in_range("seed", 1, 0, (1LL << 62)));
  return b;
}

LearningRateSchedule read_schedule(const Config& train, double base) {
  LearningRateSchedule s;
  s.base = base;
  if (!train.has("schedule")) return s;
  const Config c = train.at("schedule");
  c.check_known_keys({"type", "final_fraction", "gamma", "every", "warmup"});
  const std::string type = c.get_choice("type", {"constant", "step", "exponential", "cosine"}, "constant");
  s.kind = type == "step"          ? LearningRateSchedule::Kind::kStep
           : type == "exponential" ? LearningRateSchedule::Kind::kExponential
           : type == "cosine"      ? LearningRateSchedule::Kind::kCosine
                                   : LearningRateSchedule::Kind::kConstant;
  s.final_fraction = c.get_in_range("final_fraction", 0.0, 0.0, 1.0);
  s.gamma = c.get_in_range("gamma", 0.1, 1e-12, 1.0);
  s.step_every = static_cast<int>(c.get_int_in_range("every", 10, 1, kMaxEpochs));
  s.warmup_epochs = static_cast<int>(c.get_int_in_range("warmup", 0, 0, kMaxEpochs));
  return s;
}

}  // namespace

TrainConfig read_train_config(const Config& t, const Model<double>& model, const ContactParameters<double>* contact,
                              long long seed, std::vector<std::string>* warnings) {
  t.check_known_keys({"model", "physical", "baseline", "controls", "mode", "window_steps", "window_stride",
                      "train_samples", "train_trajectories", "curriculum", "optimizer", "epochs", "batch_size", "learning_rate",
                      "schedule", "weight_decay", "clip_norm", "patience", "validation_steps",
                      "validation_stride"});
  TrainConfig c;
  const std::string kind = t.get_choice("model", {"hybrid", "mlp", "lstm"}, "hybrid");
  c.model = kind == "mlp" ? TrainedModel::kMlp : kind == "lstm" ? TrainedModel::kLstm : TrainedModel::kHybrid;
  // An empty list is no physical parameter (a sweep's `--set train.physical=[]`).
  if (t.has("physical") && !(t.is_list("physical") && t.list("physical").empty())) {
    if (c.model != TrainedModel::kHybrid) t.fail("physical", "only a hybrid model has physical parameters");
    c.physical = read_parameter_set(t, "physical", model, contact, warnings);
  }
  if (t.has("baseline") && c.model == TrainedModel::kHybrid)
    t.fail("baseline", "applies to model: mlp or lstm, not hybrid");
  if (c.model != TrainedModel::kHybrid) c.baseline = read_baseline(t, c.model);
  c.use_controls = t.get_choice("controls", {"recorded", "none"}, "recorded") == "recorded";

  TrainerOptions& o = c.trainer;
  const std::string mode = t.get_choice("mode", {"one_step", "unrolled_detached", "unrolled"}, "unrolled");
  o.mode = mode == "one_step"            ? TrainingMode::kOneStep
           : mode == "unrolled_detached" ? TrainingMode::kUnrolledDetached
                                         : TrainingMode::kUnrolled;
  o.window_steps = static_cast<int>(t.get_int_in_range("window_steps", 1, 1, kMaxSteps));
  o.window_stride = static_cast<int>(t.get_int_in_range("window_stride", 1, 1, kMaxSteps));
  o.max_samples = static_cast<int>(t.get_int_in_range("train_samples", 0, 0, kMaxSteps));
  if (o.max_samples != 0 && o.max_samples <= o.window_steps)
    t.fail("train_samples", "must exceed window_steps (" + std::to_string(o.window_steps) +
                                "): a window of K steps needs K + 1 samples");
  c.train_trajectories = static_cast<int>(t.get_int_in_range("train_trajectories", 0, 0, 100000000));
  if (t.has("curriculum")) {
    const Config cu = t.at("curriculum");
    cu.check_known_keys({"start", "every", "factor"});
    o.curriculum_start = static_cast<int>(cu.get_int_in_range("start", 1, 1, o.window_steps));
    o.curriculum_every = static_cast<int>(cu.get_int_in_range("every", 10, 1, kMaxEpochs));
    o.curriculum_factor = static_cast<int>(cu.get_int_in_range("factor", 2, 2, 1000));
  }
  const std::string optimizer = t.get_choice("optimizer", {"adam", "lbfgs"}, "adam");
  o.optimizer = optimizer == "lbfgs" ? TrainerOptions::Optimizer::kLbfgs : TrainerOptions::Optimizer::kAdam;
  o.epochs = static_cast<int>(t.get_int_in_range("epochs", 100, 1, kMaxEpochs));
  o.batch_size = static_cast<int>(t.get_int_in_range("batch_size", 16, 1, 100000000));
  const double lr = t.get_in_range("learning_rate", 1e-3, 1e-12, 10.0);
  o.schedule = read_schedule(t, lr);
  o.adam.learning_rate = lr;
  o.adam.weight_decay = t.get_in_range("weight_decay", 0.0, 0.0, 1e3);
  o.clip_norm = t.get_in_range("clip_norm", 0.0, 0.0, 1e12);
  o.patience = static_cast<int>(t.get_int_in_range("patience", 0, 0, kMaxEpochs));
  o.validation_steps = static_cast<int>(t.get_int_in_range("validation_steps", 0, 0, kMaxSteps));
  // Samples between validation-window starts; absent: the validation
  // windows' K (disjoint windows).
  if (t.has("validation_stride"))
    o.validation_stride = static_cast<int>(t.get_int_in_range("validation_stride", 1, 1, kMaxSteps));
  if (o.optimizer == TrainerOptions::Optimizer::kLbfgs) {
    for (const char* key : {"batch_size", "weight_decay", "clip_norm", "schedule"})
      if (t.has(key)) t.fail(key, "applies to optimizer: adam only (L-BFGS is full-batch, without decay or clipping)");
  }
  o.seed = static_cast<std::uint64_t>(seed);
  return c;
}

}  // namespace neuralsim
