#!/usr/bin/env bash
# The session-12 device run (issue 18; docs/benchmarks.md "Parsers on predicted tags, step by
# step"): every parser reads the same predicted tags and gets the same minutes.
#   * on the GPU: bilstm-tags parsers, seeds 3..6 (members of an ensemble with the CPU's seeds 1
#     and 2), and one bilstm-words parser;
#   * on CPU cores, one thread each: the per-step rows (FFN on gold UPOS, on jackknifed UPOS, on
#     jackknifed UPOS+FEATS without and with pseudo-projective lifting; a random LSTM; an FFN for
#     half the time, then the LSTM bootstrapped from it for the other half).
# Inputs in .gpu/ (prepared on the CPU machine from the K = 5 jackknife of the 47-minute pipeline
# of session 11): data/train.jk.conllu (EWT train with the fold taggers' UPOS, XPOS, FEATS),
# data/dev.pred.conllu (EWT dev with the all-train tagger's; gold trees), data/{dev,test}.in.conllu
# (the tags the parsers read when scored), all.tagger (the all-train tagger: encoder init), the
# EWT files, tools/conll18_ud_eval.py, proto.py (ensemble decoding), a conllu wheel.
# Run from the repository root: `bash bench/gpu_parsers.sh`; MINI=1 rehearses it on the CPU.
set -u
G=$PWD/.gpu
W=${W:-/tmp/w}
OUT=${OUT:-/tmp/out}
mkdir -p $W $OUT
python3 -m pip install -q --no-index --no-deps --target /tmp/site $G/whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
D=$G/data
E=$D  # the gold EWT files
DEV=${DEVICE:-cuda}
if [ "${MINI:-0}" = 1 ]; then
  LIM="--max-sentences 300"; MIN=0.3; HALF=0.15; DEV=cpu
else
  LIM=""; MIN=${MIN:-6.8}; HALF=${HALF:-3.3}
fi
T="python3 -m tagger"
S="python3 $G/tools/conll18_ud_eval.py"
(date; nvidia-smi; python3 -c "import torch,sys;print(torch.__version__, torch.cuda.is_available(), sys.version)"; nproc; lscpu | grep 'Model name') > $W/env.txt 2>&1
JK=$D/train.jk.conllu; DP=$D/dev.pred.conllu

score() {  # score NAME MODEL: dev and test on predicted tags, test on gold tags
  local name=$1 model=$2
  for part in dev test; do
    $T tag --model $model $D/$part.in.conllu -o $W/$name.$part.conllu --threads 1 2>> $W/eval.log
    $S -v $E/en_ewt-ud-$part.conllu $W/$name.$part.conllu > $W/$name.$part.score 2>&1
  done
  $T tag --model $model $E/en_ewt-ud-test.conllu -o $W/$name.gold-test.conllu --threads 1 2>> $W/eval.log
  $S -v $E/en_ewt-ud-test.conllu $W/$name.gold-test.conllu > $W/$name.gold-test.score 2>&1
}

train() {  # train NAME DEVICE MINUTES ARGS...: train a parser, then score it
  local name=$1 device=$2 minutes=$3; shift 3
  $T train --task dep --out $W/$name.model --max-minutes $minutes --device $device --threads 1 $LIM --json "$@" \
    > $W/$name.json 2> $W/$name.log && score $name $W/$name.model
}

gpu_members() {
  for s in 3 4 5 6; do
    train tags$s $DEV $MIN --preset bilstm-tags --set tag_column=upos+feats --encoder-from $G/all.tagger \
      --train $JK --dev $DP --seed $s &
  done
  train words1 $DEV $MIN --preset bilstm-words --encoder-from $G/all.tagger --train $JK --dev $DP --seed 1 &
  wait
}

cpu_rows() {
  train ffn-gold-upos-skip cpu $MIN --set tag_column=upos --set nonprojective=skip --train $E/en_ewt-ud-train.conllu \
    --dev $E/en_ewt-ud-dev.conllu &
  train ffn-jk-upos-skip cpu $MIN --set tag_column=upos --set nonprojective=skip --train $JK --dev $DP &
  train ffn-jk-uf-skip cpu $MIN --set tag_column=upos+feats --set nonprojective=skip --train $JK --dev $DP &
  train ffn-jk-uf-lift cpu $MIN --set tag_column=upos+feats --train $JK --dev $DP &
  train lstm-jk-uf-lift cpu $MIN --arch lstm --set tag_column=upos+feats --train $JK --dev $DP &
  ( train ffn-half cpu $HALF --set tag_column=upos+feats --train $JK --dev $DP
    train lstm-boot cpu $HALF --arch lstm --bootstrap $W/ffn-half.model --gates i,j,f,o --set tag_column=upos+feats \
      --train $JK --dev $DP ) &
  wait
}

( sleep ${WATCHDOG:-560}; echo watchdog >> $W/env.txt; while true; do pkill -f "tagger (train|tag)"; sleep 1; done ) \
  > /dev/null 2>&1 &
dog=$!
gpu_members & g=$!; cpu_rows & c=$!; wait $g $c
# ensembles of the GPU members (the CPU's seeds 1 and 2 join them on the CPU machine)
pids=""
[ $SECONDS -lt 500 ] && for set in "tags3 tags4" "tags3 tags4 tags5 tags6" "tags3 tags4 tags5 tags6 words1"; do
  name=ens-$(echo $set | tr ' ' '-')
  models=$(for m in $set; do echo $W/$m.model; done)
  for part in dev test; do
    ( python3 $G/proto.py $D/$part.in.conllu $W/$name.$part.conllu $models 2>> $W/eval.log
      $S -v $E/en_ewt-ud-$part.conllu $W/$name.$part.conllu > $W/$name.$part.score 2>&1 ) &
    pids="$pids $!"
  done
done
wait $pids
pkill -P $dog; kill $dog 2>/dev/null
date >> $W/env.txt
grep -H '^LAS' $W/*.score > $W/las.txt
# what comes back: at most 8 files of 16 MB
(cd $W && tar czf $OUT/results.tar.gz *.json *.log *.score las.txt env.txt 2>/dev/null)
(cd $W && tar cf - tags3.model tags4.model tags5.model tags6.model words1.model ffn-jk-uf-lift.model 2>/dev/null) \
  | gzip -1 | split -b 15900000 - $OUT/models.tgz.part-
ls -la $OUT
cat $W/las.txt
