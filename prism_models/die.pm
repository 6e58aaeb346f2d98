// Knuth and Yao's die from coin flips (PRISM case study https://www.prismmodelchecker.org/casestudies/dice.php),
// with two coins whose biases are parameters: the first flip and the flips that restart a round use a coin of bias
// p, the others one of bias q (as in Storm's parametric examples). With p = q = 1/2 every face has probability 1/6.
// Its undefined constants are parameters for `stormcf repair`; give them with -c for the other commands.
dtmc

const double p;
const double q;

module die
    s : [0..7] init 0;
    d : [0..6] init 0;

    [] s=0 -> p : (s'=1) + (1-p) : (s'=2);
    [] s=1 -> q : (s'=3) + (1-q) : (s'=4);
    [] s=2 -> q : (s'=5) + (1-q) : (s'=6);
    [] s=3 -> p : (s'=1) + (1-p) : (s'=7) & (d'=1);
    [] s=4 -> p : (s'=7) & (d'=2) + (1-p) : (s'=7) & (d'=3);
    [] s=5 -> p : (s'=7) & (d'=4) + (1-p) : (s'=7) & (d'=5);
    [] s=6 -> p : (s'=2) + (1-p) : (s'=7) & (d'=6);
    [] s=7 -> (s'=7);
endmodule

label "one" = s=7 & d=1;
label "two" = s=7 & d=2;
label "three" = s=7 & d=3;
label "four" = s=7 & d=4;
label "five" = s=7 & d=5;
label "six" = s=7 & d=6;
label "done" = s=7;

rewards "flips"
    s<7 : 1;
endrewards
