// A stiff DTMC: two states pass the token back and forth and leave the cycle with probability 1e-9 per step,
// to "bad" from s=0 and to "good" from s=1. P=? [F "bad"] = 1 / (2 - 1e-9). Storm's value iteration needs about
// 1e10 sweeps to converge to a relative precision of 1e-10 here (it crawls); exact arithmetic answers at once.
// stormcf's checks fall back to exact arithmetic on such small models (stormcf.storm.check).
dtmc

const double eps = 1e-9;

module token
  s : [0..3] init 0;
  [] s=0 -> 1-eps : (s'=1) + eps : (s'=2);
  [] s=1 -> 1-eps : (s'=0) + eps : (s'=3);
  [] s>=2 -> true;
endmodule

label "bad" = s=2;
label "good" = s=3;
