# A process killed while saving leaves the previous checkpoint loadable, and
# a checkpoint whose data was damaged is refused by its checksum.
# -DRUN=zshard-run -DARTIFACT=quad.zsa -DWORK=dir
file(MAKE_DIRECTORY ${WORK})
set(ckpt ${WORK}/ckpt.safetensors)
file(REMOVE ${ckpt})
execute_process(COMMAND ${RUN} ${ARTIFACT} --steps 2 --save ${ckpt} --quiet
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the first save failed (${rc}): ${err}")
endif()
file(SHA256 ${ckpt} before)

# Die after writing the next checkpoint, before renaming it into place.
set(ENV{ZSHARD_TEST_CRASH_BEFORE_RENAME} 1)
execute_process(COMMAND ${RUN} ${ARTIFACT} --resume ${ckpt} --steps 2
                        --save ${ckpt} --quiet
                RESULT_VARIABLE rc ERROR_VARIABLE err)
unset(ENV{ZSHARD_TEST_CRASH_BEFORE_RENAME})
if(NOT rc EQUAL 71)
  message(FATAL_ERROR "expected the injected crash (71), got ${rc}: ${err}")
endif()
file(SHA256 ${ckpt} after)
if(NOT before STREQUAL after)
  message(FATAL_ERROR "the crash changed the previous checkpoint")
endif()
execute_process(COMMAND ${RUN} ${ARTIFACT} --resume ${ckpt} --steps 1
                        --log-json ${WORK}/resumed.jsonl --quiet
                RESULT_VARIABLE rc ERROR_VARIABLE err)
file(READ ${WORK}/resumed.jsonl log)
if(NOT rc EQUAL 0 OR NOT log MATCHES "\"step\":3")
  message(FATAL_ERROR "the previous checkpoint did not resume at step 3 "
                      "(${rc}): ${err}${log}")
endif()

# Damage one data byte (the file's last): the checksum must catch it.
file(READ ${ckpt} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR keep "${n} - 2")
string(SUBSTRING "${hex}" 0 ${keep} head)
string(SUBSTRING "${hex}" ${keep} 2 last)
if(last STREQUAL "00")
  set(last "01")
else()
  set(last "00")
endif()
set(bad ${WORK}/bad.safetensors)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${head}${last}")
execute_process(COMMAND /usr/bin/printf "${escaped}" OUTPUT_FILE ${bad})
execute_process(COMMAND ${RUN} ${ARTIFACT} --resume ${bad} --steps 1 --quiet
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "checksum mismatch")
  message(FATAL_ERROR "a damaged checkpoint was not refused by its checksum "
                      "(${rc}): ${err}")
endif()
message(STATUS "crash during save: previous checkpoint intact and resumed; "
               "damaged data refused")
