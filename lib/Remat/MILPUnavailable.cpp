//===- MILPUnavailable.cpp - milp when recast is built without CBC --------===//

#include "SolverImpl.h"

using namespace llvm;

namespace recast {
namespace remat {

namespace {

class UnavailableMILPSolver : public Solver {
public:
  StringRef name() const override { return "milp"; }
  Expected<SolveResult> solve(const Problem &, const SolveOptions &) override {
    return createStringError(inconvertibleErrorCode(),
                             "milp: recast was built without CBC (install "
                             "coinor-libcbc-dev and reconfigure)");
  }
};

} // namespace

bool isMILPAvailable() { return false; }

std::unique_ptr<Solver> createMILPSolver() {
  return std::make_unique<UnavailableMILPSolver>();
}

} // namespace remat
} // namespace recast
