#!/usr/bin/env bash
# The session-11 GPU run (one H200, 8 minutes; docs/tagger.md "Distillation", docs/benchmarks.md):
# (1) five `fast` UPOS teachers at once, then two distilled students (`small`, and `small` with
# 2 layers) (issue 20); (2) a 3-column tagger, then the bilstm-words parser started from it, then
# the pipeline scored on EWT dev/test by the official scorer (issue 18). Run from the repository
# root with the EWT files and conll18_ud_eval.py copied into .gpu/data and .gpu/tools (and a
# conllu wheel in .gpu/whl where the machine lacks it): `bash bench/gpu_distill_pipeline.sh`.
# MINI=1: a tiny CPU rehearsal. Results in $W (/tmp/w), the models and a tarball in $OUT.
set -u
G=$PWD/.gpu
W=${W:-/tmp/w}
OUT=${OUT:-/tmp/out}
mkdir -p $W $OUT
python3 -m pip install -q --no-index --no-deps --target /tmp/site $G/whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
mkdir -p ../shared/tools ../shared/data/ud-english-ewt
cp -n $G/tools/conll18_ud_eval.py ../shared/tools/ 2>/dev/null
for p in train dev test; do ln -sf $G/data/en_ewt-ud-$p.conllu ../shared/data/ud-english-ewt/; done
D=$G/data
TR=$D/en_ewt-ud-train.conllu; DV=$D/en_ewt-ud-dev.conllu; TE=$D/en_ewt-ud-test.conllu
DEV=${DEVICE:-cuda}
if [ "${MINI:-0}" = 1 ]; then
  LIM="--max-sentences 200"; TM=0.2; TP=0.2; TS=0.2; TD=0.2; DEV=cpu
else
  LIM=""; TM=3.5; TP=2.8; TS=3.0; TD=3.7
fi
T="python3 -m tagger"
(date; nvidia-smi; python3 -c "import torch,sys;print(torch.__version__, torch.cuda.is_available(), sys.version)"; nproc) > $W/env.txt 2>&1

teachers() {
  for s in 1 2 3 4 5; do
    $T train --task pos --train $TR --dev $DV --out $W/t$s.tagger --seed $s --max-minutes $TM --device $DEV \
      --threads 2 $LIM --json > $W/t$s.json 2> $W/t$s.log &
  done
  wait
  $T distill --teacher $W/t1.tagger $W/t2.tagger $W/t3.tagger $W/t4.tagger $W/t5.tagger --preset small \
    --train $TR --dev $DV --out $W/student.tagger --max-minutes $TS --device $DEV --threads 2 $LIM --json \
    > $W/student.json 2> $W/student.log &
  $T distill --teacher $W/t1.tagger $W/t2.tagger $W/t3.tagger $W/t4.tagger $W/t5.tagger --preset small --set layers=2 \
    --train $TR --dev $DV --out $W/student2.tagger --max-minutes $TS --device $DEV --threads 2 $LIM --json \
    > $W/student2.json 2> $W/student2.log &
  wait
  for m in t1 t2 t3 t4 t5 student student2; do
    $T evaluate --model $W/$m.tagger $TE --device $DEV --json > $W/$m.test.json 2>> $W/eval.log
  done
}

pipeline() {
  $T train --task pos --column upos,xpos,feats --train $TR --dev $DV --out $W/pos3.tagger --max-minutes $TP \
    --device $DEV --threads 2 $LIM --json > $W/pos3.json 2> $W/pos3.log
  $T train --task dep --preset bilstm-words --encoder-from $W/pos3.tagger --train $TR --dev $DV \
    --out $W/dep.model --max-minutes $TD --device $DEV --threads 2 $LIM --json > $W/dep.json 2> $W/dep.log
  python3 bench/bench_pipeline.py --ours $W/pos3.tagger --ours $W/dep.model --out-dir $W/pipe --threads 2 \
    > $W/pipe.json 2> $W/pipe.log
  $T evaluate --model $W/dep.model $TE --device $DEV --json > $W/dep.test-gold.json 2>> $W/eval.log
}

( sleep ${WATCHDOG:-555}; echo watchdog >> $W/env.txt; while true; do pkill -f "tagger (train|distill|evaluate|tag)"; pkill -f bench_pipeline; sleep 1; done ) > /dev/null 2>&1 &
dog=$!
teachers & t=$!; pipeline & p=$!; wait $t $p; pkill -P $dog; kill $dog 2>/dev/null
date >> $W/env.txt
# what comes back: at most 8 files of 16 MB
(cd $W && tar czf $OUT/results.tar.gz *.json *.log env.txt pipe/*.conllu 2>/dev/null)
for m in t1 student student2 pos3; do cp $W/$m.tagger $OUT/ 2>/dev/null; done
cp $W/dep.model $OUT/ 2>/dev/null
ls -la $OUT $W
