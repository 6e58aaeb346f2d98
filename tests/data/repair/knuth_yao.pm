// Knuth and Yao's die from a coin of bias p (one parameter): the die of PRISM's case studies
// (https://www.prismmodelchecker.org/casestudies/dice.php) with its fair coin replaced by an undefined constant,
// as on Storm's page on parametric models. P(F "one") = p^2/(p+1).
dtmc

const double p;

module die
    s : [0..7] init 0;
    d : [0..6] init 0;

    [] s=0 -> p : (s'=1) + (1-p) : (s'=2);
    [] s=1 -> p : (s'=3) + (1-p) : (s'=4);
    [] s=2 -> p : (s'=5) + (1-p) : (s'=6);
    [] s=3 -> p : (s'=1) + (1-p) : (s'=7) & (d'=1);
    [] s=4 -> p : (s'=7) & (d'=2) + (1-p) : (s'=7) & (d'=3);
    [] s=5 -> p : (s'=7) & (d'=4) + (1-p) : (s'=7) & (d'=5);
    [] s=6 -> p : (s'=2) + (1-p) : (s'=7) & (d'=6);
    [] s=7 -> (s'=7);
endmodule

label "one" = s=7 & d=1;
label "done" = s=7;

rewards "flips"
    s<7 : 1;
endrewards
