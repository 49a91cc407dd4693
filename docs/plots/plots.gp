# Written by shmsched-bench --plot; run: gnuplot plots.gp
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 960,600 noenhanced
} else {
    set terminal png size 960,600 noenhanced
}
set datafile missing '?'
set grid
set key top left

set output 'throughput_nodes.png'
set title 'pods per second against cluster size (AMD EPYC, 2 cores)'
set xlabel 'nodes'
set ylabel 'pods (ring_limit: handles) per second'
set logscale xy
plot 'throughput_nodes.dat' using 1:2 with linespoints title 'engine', \
     '' using 1:3 with linespoints title 'reference', \
     '' using 1:4 with linespoints title 'ring_limit'

set output 'latency_cdf.png'
set title 'latency CDF: open loop at 7912 pods/s, from the scheduled submit time'
set xlabel 'latency (us)'
set ylabel 'share of pods answered within'
set logscale x
unset logscale y
set yrange [0:1]
set key bottom right
plot 'latency_cdf.dat' using 1:2 with steps title 'engine'
