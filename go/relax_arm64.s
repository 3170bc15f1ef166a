#include "textflag.h"

// func cpuRelax()
// YIELD: the arm64 spin-loop hint.
TEXT ·cpuRelax(SB), NOSPLIT|NOFRAME, $0-0
	YIELD
	RET
