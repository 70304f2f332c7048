//===- RunnerErrorsTest.cpp - zshard-run on bad inputs --------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Every bad input (artifact, library, data, state file, command line) must
// end zshard-run with exit status 2 and one line on stderr that names the
// file and the problem; never a crash, never a JSON summary.
//
//===----------------------------------------------------------------------===//

#include "ErrorCase.h"
#include "RunnerSupport.h"

#include "io/Safetensors.h"

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <regex>

using namespace zshard::rt;
using namespace zshard::rt::test;

namespace {

std::string writeManifestText(const TempDir &dir, const std::string &name,
                              const std::string &text) {
  std::string path = dir.file(name + ".zsa");
  std::string command = "mkdir -p " + shellQuote(path);
  if (std::system(command.c_str()) != 0)
    std::abort();
  std::ofstream(path + "/manifest.json") << text;
  return path;
}

} // namespace

// Tests the artifact and library errors of docs/runtime.md.
TEST(RunnerErrorsTest, Artifacts) {
  const std::string manifestAt = ".*/bad\\.zsa/manifest\\.json: ";
  ErrorCase cases[] = {
      {"no artifact directory",
       [](const TempDir &d) {
         return std::vector<std::string>{d.file("x.zsa")};
       },
       ".*/x\\.zsa: no such artifact \\(expected a directory NAME\\.zsa "
       "holding manifest\\.json\\)"},
      {"no manifest",
       [](const TempDir &d) { return std::vector<std::string>{d.path}; },
       ".*/manifest\\.json: cannot open: No such file or directory"},
      {"bad JSON",
       [](const TempDir &d) {
         return std::vector<std::string>{
             writeManifestText(d, "bad", "{\"format\": \"zshard-artifact\",")};
       },
       manifestAt + "invalid JSON \\(.*parse error.*\\)"},
      {"wrong format",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["format"] = "onnx";
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "format 'onnx' is not 'zshard-artifact'"},
      {"wrong version",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["version"] = 7;
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "manifest version 7 is not supported: this runtime "
                    "reads version 2 \\(compile the step with a "
                    "zshard-compile of the same release\\)"},
      {"missing field",
       [](const TempDir &d) {
         Json m = quadManifest();
         m.erase("entry");
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "missing field 'entry'"},
      {"unknown dtype",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["arguments"][2]["dtype"] = "f8";
         setSignature(m);
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "arguments\\[2\\] \\('lr'\\): unknown dtype 'f8' .*"},
      {"unknown role",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["arguments"][2]["role"] = "constant";
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "arguments\\[2\\] \\('lr'\\): unknown argument role "
                    "'constant' \\(known: param, opt_state, batch, hyper, "
                    "param_shard, opt_state_shard, buffer\\)"},
      {"signature of the manifest",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["arguments"][0]["shape"] = {4};
         m["arguments"][1]["shape"] = {4};
         m["results"][1]["shape"] = {4};
         m["results"][2]["shape"] = {4};
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "signature dbb7bd2d18a643f3 does not match the arguments "
                    "and results, whose signature is [0-9a-f]{16}"},
      {"library missing",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["library"] = "missing.so";
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       ".*/bad\\.zsa/missing\\.so: step library named by .*/manifest\\.json "
       "is missing \\(No such file or directory\\)"},
      {"library not an ELF file",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["library"] = "garbage.so";
         std::string path = writeArtifact(d, "bad", m);
         std::ofstream(path + "/garbage.so") << std::string(100, 'x');
         return std::vector<std::string>{path};
       },
       ".*/garbage\\.so: cannot load the step library: .*garbage\\.so: "
       "invalid ELF header"},
      {"library with an unresolved symbol",
       [](const TempDir &) {
         return std::vector<std::string>{artifact("quad-unresolved")};
       },
       ".*/quad-unresolved\\.zsa/step\\.so: cannot load the step library: "
       ".*undefined symbol: zshard_test_symbol_nobody_defines"},
      {"entry missing",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["entry"] = "train_step";
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       ".*/quad\\.zsa/step\\.so: no entry 'train_step' \\(named by the "
       "manifest\\): .*undefined symbol: train_step"},
      {"signature function missing",
       [](const TempDir &) {
         return std::vector<std::string>{artifact("quad-no-signature")};
       },
       ".*/step\\.so: no 'zshard_step_signature' function: .*undefined "
       "symbol: zshard_step_signature"},
      {"signature of the library",
       [](const TempDir &) {
         return std::vector<std::string>{artifact("quad-bad-signature")};
       },
       ".*/quad-bad-signature\\.zsa/step\\.so: signature 0123456789abcdef "
       "differs from dbb7bd2d18a643f3 in .*/manifest\\.json \\(the library "
       "and the manifest come from different compilations\\)"},
      {"several ranks",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["ranks"] = 4;
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "ranks 4 needs a grid \\(\"grid\" is null: the "
                    "artifact is single-rank\\)"},
      {"unknown hyper",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["arguments"][3]["name"] = "beta1";
         setSignature(m);
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "hyper 'beta1' has no value: zshard-run supplies the "
                    "hypers lr and step"},
      {"cuda artifact on the cpu",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["target"] = "cuda";
         m["chip"] = "sm_90";
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "the artifact is compiled for CUDA \\(target 'cuda', "
                    "chip sm_90\\); run it with --device cuda, or compile "
                    "the step without --target=cuda to run it on the CPU"},
      {"cpu artifact on cuda",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["target"] = "cpu";
         return std::vector<std::string>{writeArtifact(d, "bad", m), "--device",
                                         "cuda"};
       },
       manifestAt + "the artifact is compiled for the CPU \\(target "
                    "'cpu'\\); run it without --device cuda, or compile the "
                    "step with --target=cuda"},
      {"unknown target",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["target"] = "tpu";
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "target 'tpu' is not 'cpu' or 'cuda'"},
      {"default on a param",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["arguments"][0]["default"] = 1.0;
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "arguments\\[0\\] \\('w'\\): field 'default' is for "
                    "hyper arguments only"},
      {"default not a number",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["arguments"][2]["default"] = "fast";
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "arguments\\[2\\] \\('lr'\\): field 'default' must "
                    "be a finite number, got \"fast\""},
      {"recorded lr not positive",
       [](const TempDir &d) {
         Json m = quadManifest();
         m["arguments"][2]["default"] = 0.0;
         return std::vector<std::string>{writeArtifact(d, "bad", m)};
       },
       manifestAt + "hyper 'lr' records the default 0\\.000000, and an lr "
                    "must be > 0 \\(give --lr\\)"},
  };
  for (const ErrorCase &c : cases)
    expectError(c);
}

// Tests the data errors: token files and batch files.
TEST(RunnerErrorsTest, Data) {
  auto tokensWith = [](const TempDir &d, const std::vector<uint16_t> &tokens,
                       size_t bytes) {
    writeBytes(d.file("t.bin"), tokens.data(), bytes);
    return std::vector<std::string>{artifact("tokens"), "--data",
                                    d.file("t.bin")};
  };
  ErrorCase cases[] = {
      {"token file missing",
       [](const TempDir &d) {
         return std::vector<std::string>{artifact("tokens"), "--data",
                                         d.file("none.bin")};
       },
       ".*/none\\.bin: cannot open: No such file or directory"},
      {"token file of odd size",
       [&](const TempDir &d) {
         return tokensWith(d, std::vector<uint16_t>(20, 1), 39);
       },
       ".*/t\\.bin: size 39 bytes is not a multiple of 2 \\(u16 tokens; see "
       "--data-dtype\\)"},
      {"token file too short",
       [&](const TempDir &d) {
         return tokensWith(d, std::vector<uint16_t>(8, 1), 16);
       },
       ".*/t\\.bin: 8 tokens, fewer than the 9 \\(T \\+ 1\\) one batch row "
       "needs"},
      {"token outside the vocabulary",
       [&](const TempDir &d) {
         std::vector<uint16_t> tokens(50, 3);
         tokens[42] = 300;
         tokens[45] = 400;
         return tokensWith(d, tokens, 100);
       },
       ".*/t\\.bin: token 300 at index 42 is not below the vocabulary size "
       "16 \\(the rows of param 'wte'\\); read as u16: is it a file of u32 "
       "tokens\\? \\(--data-dtype u32\\)"},
      {"u16 file read as u32",
       [&](const TempDir &d) {
         std::vector<std::string> args =
             tokensWith(d, std::vector<uint16_t>(50, 3), 100);
         args.insert(args.end(), {"--data-dtype", "u32"});
         return args;
       },
       ".*/t\\.bin: token 196611 at index 0 is not below the vocabulary "
       "size 16 \\(the rows of param 'wte'\\); read as u32: is it a file of "
       "u16 tokens\\? \\(--data-dtype u16\\)"},
      {"u32 file read as u16",
       [](const TempDir &d) {
         std::vector<uint32_t> tokens(40);
         for (size_t i = 0; i < tokens.size(); ++i)
           tokens[i] = uint32_t(i % 16);
         writeVector(d.file("t.bin"), tokens);
         return std::vector<std::string>{artifact("tokens"), "--data",
                                         d.file("t.bin")};
       },
       ".*/t\\.bin: every second u16 token is 0 \\(80 tokens\\): it looks "
       "like a file of u32 tokens; give --data-dtype u32"},
      {"nanoGPT names, token outside the vocabulary",
       [&](const TempDir &d) {
         std::vector<uint16_t> tokens(50, 3);
         tokens[7] = 16;
         std::vector<std::string> args = tokensWith(d, tokens, 100);
         args[0] = artifact("tokens-idx");
         return args;
       },
       ".*/t\\.bin: token 16 at index 7 is not below the vocabulary size 16 "
       "\\(the rows of param 'transformer\\.wte\\.weight'\\); read as "
       "u16: .*"},
      {"token file for a step without tokens",
       [&](const TempDir &d) {
         std::vector<std::string> args =
             tokensWith(d, std::vector<uint16_t>(50, 1), 100);
         args[0] = artifact("mlp");
         return args;
       },
       ".*/t\\.bin: a token file feeds a step whose two batch arguments are "
       "a token window and the window shifted by one, integer \\[B, T\\], "
       "named tokens/targets, idx/targets, input_ids/targets, "
       "inputs/targets, x/y or given by --data-inputs INPUTS,TARGETS; this "
       "step has: x f32 \\[5, 4\\], target f32 \\[5, 3\\]"},
      {"token file for names it cannot guess",
       [&](const TempDir &d) {
         std::vector<std::string> args =
             tokensWith(d, std::vector<uint16_t>(50, 1), 100);
         args[0] = artifact("tokens-named");
         return args;
       },
       ".*/t\\.bin: a token file feeds .* or given by --data-inputs "
       "INPUTS,TARGETS; this step has: ids i32 \\[2, 8\\], next i32 "
       "\\[2, 8\\]"},
      {"data inputs naming no batch argument",
       [&](const TempDir &d) {
         std::vector<std::string> args =
             tokensWith(d, std::vector<uint16_t>(50, 1), 100);
         args[0] = artifact("tokens-named");
         args.insert(args.end(), {"--data-inputs", "ids,targets"});
         return args;
       },
       "--data-inputs: 'targets' is not a batch argument of the step; its "
       "batch arguments: ids i32 \\[2, 8\\], next i32 \\[2, 8\\]"},
      {"data inputs that are not token windows",
       [&](const TempDir &d) {
         std::vector<std::string> args =
             tokensWith(d, std::vector<uint16_t>(50, 1), 100);
         args[0] = artifact("mlp");
         args.insert(args.end(), {"--data-inputs", "x,target"});
         return args;
       },
       "--data-inputs: 'x' and 'target' must be integer \\[B, T\\] of one "
       "shape to take token windows; the step has: x f32 \\[5, 4\\], "
       "target f32 \\[5, 3\\]"},
      {"batch file with a broken header",
       [](const TempDir &d) {
         writeBytes(d.file("b.safetensors"), "\x20\0\0\0\0\0\0\0{\"x\":", 13);
         return std::vector<std::string>{artifact("mlp"), "--batch-file",
                                         d.file("b.safetensors")};
       },
       ".*/b\\.safetensors: invalid safetensors file: header length 32 runs "
       "past the end of the file \\(5 bytes follow the length\\)"},
      {"batch file without a tensor",
       [](const TempDir &d) {
         std::vector<float> x(20);
         writeSafetensors(d.file("b.safetensors"),
                          {{"x", DType::F32, {5, 4}, x.data()}}, {});
         return std::vector<std::string>{artifact("mlp"), "--batch-file",
                                         d.file("b.safetensors")};
       },
       ".*/b\\.safetensors: no tensor for batch argument 'target' \\(f32 "
       "\\[5, 3\\]\\)"},
  };
  for (const ErrorCase &c : cases)
    expectError(c);
}

// Tests the errors of --init-from and --resume files.
TEST(RunnerErrorsTest, StateFiles) {
  static std::vector<float> three = {1, 2, 3}, four = {1, 2, 3, 4};
  static std::vector<int32_t> ints = {1, 2, 3};
  auto withFile =
      [](const TempDir &d, const std::vector<TensorToWrite> &t,
         const char *option = "--init-from",
         std::vector<std::pair<std::string, std::string>> meta = {}) {
        writeSafetensors(d.file("s.safetensors"), t, meta);
        return std::vector<std::string>{artifact("quad"), option,
                                        d.file("s.safetensors")};
      };
  ErrorCase cases[] = {
      {"wrong dtype",
       [&](const TempDir &d) {
         return withFile(d, {{"w", DType::I32, {3}, ints.data()}});
       },
       ".*/s\\.safetensors: tensor 'w' is I32, which cannot be read as param "
       "'w' \\(f32 \\[3\\]\\)"},
      {"wrong shape",
       [&](const TempDir &d) {
         return withFile(d, {{"w", DType::F32, {4}, four.data()}});
       },
       ".*/s\\.safetensors: tensor 'w' has shape \\[4\\], but param 'w' \\(f32 "
       "\\[3\\]\\) does not"},
      {"missing param",
       [&](const TempDir &d) {
         return withFile(d, {{"w.exp_avg", DType::F32, {3}, three.data()}});
       },
       ".*/s\\.safetensors: no tensor for param 'w' \\(f32 \\[3\\]\\)"},
      {"unexpected tensor",
       [&](const TempDir &d) {
         return withFile(d, {{"w", DType::F32, {3}, three.data()},
                             {"v", DType::F32, {3}, three.data()}});
       },
       ".*/s\\.safetensors: tensor 'v' is neither a param nor an opt_state of "
       "the step"},
      {"broken header",
       [](const TempDir &d) {
         writeBytes(d.file("s.safetensors"), "\x02\0\0\0\0\0\0\0{]", 10);
         return std::vector<std::string>{artifact("quad"), "--init-from",
                                         d.file("s.safetensors")};
       },
       ".*/s\\.safetensors: invalid safetensors file: header is not valid "
       "JSON \\(.*\\)"},
      {"truncated data",
       [](const TempDir &d) {
         std::vector<float> w = {1, 2, 3};
         writeSafetensors(d.file("s.safetensors"),
                          {{"w", DType::F32, {3}, w.data()}}, {});
         std::vector<unsigned char> bytes =
             readFileBytes(d.file("s.safetensors"));
         writeBytes(d.file("s.safetensors"), bytes.data(), bytes.size() - 1);
         return std::vector<std::string>{artifact("quad"), "--init-from",
                                         d.file("s.safetensors")};
       },
       ".*/s\\.safetensors: invalid safetensors file: tensor 'w': "
       "data_offsets \\[0, 12\\] out of range: the data section has 11 "
       "bytes"},
      {"resume without optimizer state",
       [&](const TempDir &d) {
         return withFile(d, {{"w", DType::F32, {3}, three.data()}}, "--resume",
                         {{"step", "3"}});
       },
       ".*/s\\.safetensors: no tensor for opt_state 'w\\.exp_avg' \\(f32 "
       "\\[3\\]\\) \\(a --resume file holds every param and opt_state\\)"},
      {"resume without a step",
       [&](const TempDir &d) {
         return withFile(d,
                         {{"w", DType::F32, {3}, three.data()},
                          {"w.exp_avg", DType::F32, {3}, three.data()}},
                         "--resume");
       },
       ".*/s\\.safetensors: no 'step' in __metadata__ \\(a --resume file "
       "records the step of its last update\\)"},
      {"resume with a bad step",
       [&](const TempDir &d) {
         return withFile(d,
                         {{"w", DType::F32, {3}, three.data()},
                          {"w.exp_avg", DType::F32, {3}, three.data()}},
                         "--resume", {{"step", "-1"}});
       },
       ".*/s\\.safetensors: __metadata__ step '-1' is not a non-negative "
       "integer"},
      {"save into a missing directory",
       [](const TempDir &d) {
         return std::vector<std::string>{artifact("quad"), "--steps", "1",
                                         "--save",
                                         d.file("none/out.safetensors")};
       },
       ".*/none/out\\.safetensors: cannot write: No such file or directory"},
      {"trace into a missing directory",
       [](const TempDir &d) {
         return std::vector<std::string>{artifact("quad"), "--steps", "1",
                                         "--trace", d.file("none/t.json")};
       },
       ".*/none/t\\.json: cannot write: No such file or directory"},
      {"memory timeline into a missing directory",
       [](const TempDir &d) {
         return std::vector<std::string>{artifact("quad"), "--steps", "1",
                                         "--memory-timeline",
                                         d.file("none/m.json")};
       },
       ".*/none/m\\.json: cannot write: No such file or directory"},
      {"memory timeline step past the run",
       [](const TempDir &d) {
         return std::vector<std::string>{artifact("quad"),
                                         "--steps",
                                         "3",
                                         "--memory-timeline",
                                         d.file("m.json"),
                                         "--memory-timeline-step",
                                         "4"};
       },
       "--memory-timeline-step 4 is not a step of this run \\(1\\.\\.3\\)"},
      {"memory timeline without steps",
       [](const TempDir &d) {
         return std::vector<std::string>{artifact("quad"), "--steps", "0",
                                         "--memory-timeline", d.file("m.json")};
       },
       "--memory-timeline: no step runs \\(--steps 0\\)"},
  };
  for (ErrorCase &c : cases)
    expectError(c);
}

// Tests command-line errors: the message, then the usage line.
TEST(RunnerErrorsTest, Usage) {
  auto args = [](std::vector<std::string> a) {
    return [a](const TempDir &) { return a; };
  };
  std::string quad = artifact("quad");
  ErrorCase cases[] = {
      {"no arguments", args({}), "no artifact given", true},
      {"no artifact", args({"--steps", "3"}), "no artifact given", true},
      {"repeated option", args({quad, "--steps", "3", "--steps", "4"}),
       "--steps is given twice", true},
      {"repeated option with =", args({quad, "--lr=0.1", "--lr", "0.2"}),
       "--lr is given twice", true},
      {"repeated flag", args({quad, "--quiet", "--quiet"}),
       "--quiet is given twice", true},
      {"negative learning rate", args({quad, "--lr", "-1"}),
       "--lr wants a finite number > 0, got '-1'", true},
      {"zero learning rate", args({quad, "--lr", "0"}),
       "--lr wants a finite number > 0, got '0'", true},
      {"zero ranks", args({quad, "--ranks", "0"}),
       "--ranks wants an integer from 1 to 1048576, got '0'", true},
      {"too many threads", args({quad, "--threads", "5000"}),
       "--threads wants an integer from 1 to 1024, got '5000'", true},
      {"data inputs of one name",
       args({quad, "--data", "t.bin", "--data-inputs", "idx"}),
       "--data-inputs wants two different batch argument names "
       "INPUTS,TARGETS, got 'idx'",
       true},
      {"data inputs without data", args({quad, "--data-inputs", "a,b"}),
       "--data-inputs needs --data", true},
      {"data dtype without data", args({quad, "--data-dtype", "u32"}),
       "--data-dtype needs --data", true},
      {"unknown option", args({quad, "--epochs", "3"}),
       "unknown option '--epochs'", true},
      {"negative steps", args({quad, "--steps", "-1"}),
       "--steps wants an integer >= 0, got '-1'", true},
      {"bad learning rate", args({quad, "--lr=fast"}),
       "--lr wants a finite number > 0, got 'fast'", true},
      {"missing value", args({quad, "--save"}), "--save needs a value", true},
      {"bad data dtype", args({quad, "--data", "t.bin", "--data-dtype", "u8"}),
       "--data-dtype wants u16 or u32, got 'u8'", true},
      {"two data sources",
       args({quad, "--data", "a.bin", "--batch-file", "b.safetensors"}),
       "--data and --batch-file exclude each other", true},
      {"two state files",
       args({quad, "--init-from", "a.safetensors", "--resume", "b"}),
       "--init-from and --resume exclude each other", true},
      {"two artifacts", args({quad, quad}),
       "unexpected argument '.*' \\(the artifact is '.*'\\)", true},
      {"zero threads", args({quad, "--threads", "0"}),
       "--threads wants an integer from 1 to 1024, got '0'", true},
      {"negative link bandwidth", args({quad, "--link-gbps", "-1"}),
       "--link-gbps wants a finite number >= 0, got '-1'", true},
      {"link bandwidth not a number", args({quad, "--link-gbps=fast"}),
       "--link-gbps wants a finite number >= 0, got 'fast'", true},
      {"infinite link bandwidth", args({quad, "--link-gbps", "inf"}),
       "--link-gbps wants a finite number >= 0, got 'inf'", true},
      {"negative link latency", args({quad, "--link-latency-us", "-5"}),
       "--link-latency-us wants a finite number >= 0, got '-5'", true},
      {"emulated link under MPI",
       args({quad, "--backend", "mpi", "--link-gbps", "10"}),
       "--link-gbps and --link-latency-us emulate a link between the local "
       "backend's thread ranks; --backend mpi runs over the real network",
       true},
      {"timeline step 0",
       args({quad, "--memory-timeline", "m.json", "--memory-timeline-step",
             "0"}),
       "--memory-timeline-step wants an integer >= 1, got '0'", true},
      {"timeline step without a timeline",
       args({quad, "--memory-timeline-step", "2"}),
       "--memory-timeline-step needs --memory-timeline", true},
      {"trace without a file", args({quad, "--trace"}), "--trace needs a value",
       true},
      {"unknown device", args({quad, "--device", "tpu"}),
       "--device wants cpu or cuda, got 'tpu'", true},
      {"unknown backend", args({quad, "--backend", "gloo"}),
       "--backend wants local, mpi or nccl, got 'gloo'", true},
      {"nccl on the cpu", args({quad, "--backend", "nccl"}),
       "--backend nccl runs on GPUs: it needs --device cuda", true},
      {"mpi on cuda", args({quad, "--backend", "mpi", "--device", "cuda"}),
       "--backend mpi moves host memory; with --device cuda use --backend "
       "nccl \\(under mpirun, NCCL's id travels over MPI\\)",
       true},
      {"emulated link under NCCL",
       args({quad, "--device", "cuda", "--backend", "nccl", "--link-latency-us",
             "10"}),
       "--link-gbps and --link-latency-us emulate a link between the local "
       "backend's thread ranks; --backend nccl runs over the real network",
       true},
  };
  for (ErrorCase &c : cases)
    expectError(c);
}

// --device cuda on a machine without a usable GPU (or a runtime built
// without CUDA): one line saying why, exit status 2, whatever the backend.
TEST(RunnerErrorsTest, CudaWithoutGpu) {
  int count = 0;
  if (zshard_rt_cuda_device_count(&count) == ZSHARD_RT_OK)
    GTEST_SKIP() << "this machine has a GPU";
  std::string quad = artifact("quad");
  for (const std::vector<std::string> &extra :
       {std::vector<std::string>{"--device", "cuda"},
        std::vector<std::string>{"--device=cuda", "--backend=nccl"},
        std::vector<std::string>{"--device", "cuda", "--steps", "0", "--save",
                                 "s.safetensors"}}) {
    std::vector<std::string> arguments = {quad};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    expectError({"cuda without a gpu",
                 [=](const TempDir &) { return arguments; },
                 "--device cuda: .+"});
  }
}

namespace {

// A step that calls MLIR's GPU host ABI (mgpu*) loads only on a runtime
// built with CUDA; elsewhere the loader's error says why.
TEST(RunnerErrorsTest, GpuArtifactNeedsACudaRuntime) {
  std::string path = artifact("quad-mgpu");
  if (zshard_rt_build_features() & ZSHARD_RT_FEATURE_CUDA) {
    TempDir dir;
    RunResult r = runTool({path, "--steps", "1", "--quiet"}, dir);
    EXPECT_EQ(r.exitCode, 0) << r.err; // the symbol resolves; never called
    return;
  }
  expectError({"gpu artifact on a runtime without CUDA",
               [=](const TempDir &) { return std::vector<std::string>{path}; },
               ".*/quad-mgpu\\.zsa/step\\.so: cannot load the step library: "
               ".*undefined symbol: mgpuStreamCreate.* \\(a CUDA artifact: "
               "this zshard runtime was built without CUDA\\)"});
}

} // namespace
