;; The text-edits strategy: the default loop, for models whose tool calls
;; are unreliable. When a reply makes no tool calls but its text holds
;; edits (SEARCH/REPLACE blocks, a V4A patch or a unified diff, told apart
;; by their markers), they are applied with apply-text: the guard, one
;; confirm per file with its diff, every file or none. The results go back
;; to the model as a user message. A reply with neither calls nor edits
;; ends the task, as in the default strategy.
;;
;;   nib exec --strategy scheme/strategies/text-edits.scm "fix the test"
;;
;; (run task options) is what nib calls; see default.scm.

(define (user-message text)
  (json-object "role" "user" "content" text))

(define (assistant-message reply)
  (json-object "role" "assistant"
               "content" (assoc-ref reply "text" "")
               "tool_calls" (assoc-ref reply "tool_calls" '())))

(define (tool-message result)
  (json-object "role" "tool"
               "call_id" (assoc-ref result "id" "")
               "name" (assoc-ref result "name" "")
               "content" (tool-text result)
               "is_error" (not (tool-ok? result))))

(define (finish status text steps)
  (json-object "status" status "text" text "steps" steps))

(define (reply-tokens reply)
  (let ([usage (assoc-ref reply "usage" '())])
    (+ (assoc-ref usage "prompt" 0) (assoc-ref usage "completion" 0))))

(define cut-note
  "Your last reply was cut off by the output token limit, so its tool calls and edits were not applied. Send less at once: fewer files or smaller blocks per reply.")

;; Told to the model with the task, so it knows its text edits count.
(define edits-note
  "\n\nYou may change files with tool calls, or by writing SEARCH/REPLACE blocks in your reply:\n\npath/to/file.py\n```\n<<<<<<< SEARCH\nthe exact lines to replace\n=======\nthe new lines\n>>>>>>> REPLACE\n```\n\nAll the blocks of one reply are applied together, or none if any fails. When the task is done, answer without edits.")

(define (reply-with-retry messages step)
  (let ([reply (model-reply messages step)])
    (if (member (assoc-ref reply "kind" "") (list "stream_cut" "timeout" "transient"))
        (model-reply messages step)
        reply)))

;; Does some line of text start with prefix?
(define (has-line? text prefix)
  (or (starts-with? text prefix)
      (string-contains? text (string-append "\n" prefix))))

;; The format of the edits a reply's text holds, or #f.
(define (text-edit-format text)
  (cond
    [(and (string-contains? text "<<<<<<< SEARCH")
          (string-contains? text ">>>>>>> REPLACE"))
     "search-replace"]
    [(has-line? text "*** Begin Patch") "v4a"]
    [(and (has-line? text "--- ") (has-line? text "+++ ") (has-line? text "@@")) "udiff"]
    [else #f]))

;; The results of one reply's text edits, as the model reads them.
(define (results-message results)
  (let ([head (if (every? tool-ok? results)
                  "The edits in your reply were applied:"
                  "The edits in your reply were not applied; nothing was written:")])
    (string-append head "\n\n" (string-join (map tool-text results) "\n\n"))))

(define (run task options)
  (let ([max-steps (assoc-ref options "max_steps" 30)]
        [max-tokens (assoc-ref options "max_tokens" 0)])
    (let loop ([messages (list (user-message (string-append task edits-note)))]
               [step 1]
               [tokens 0])
      (if (> step max-steps)
          (finish "step_limit" (string-append "stopped after " (number->string max-steps) " steps") max-steps)
          (let* ([reply (reply-with-retry messages step)]
                 [text (assoc-ref reply "text" "")]
                 [used (+ tokens (reply-tokens reply))]
                 [next (lambda (more)
                         (if (and (> max-tokens 0) (>= used max-tokens))
                             (finish "token_limit" (string-append "used " (number->string used) " tokens") step)
                             (loop (append messages more) (+ step 1) used)))])
            (cond
              [(assoc-ref reply "error" #f)
               (finish (if (equal? (assoc-ref reply "kind" "") "token_limit") "token_limit" "error")
                       (assoc-ref reply "error" "")
                       step)]
              [(equal? (assoc-ref reply "finish" "") "length")
               (next (list (json-object "role" "assistant" "content" text)
                           (user-message cut-note)))]
              [(not (null? (assoc-ref reply "tool_calls" '())))
               (let ([results (run-calls (assoc-ref reply "tool_calls" '()) step)])
                 (next (append (list (assistant-message reply))
                               (map tool-message results))))]
              [else
               (let ([fmt (text-edit-format text)])
                 (if fmt
                     (let ([results (apply-text fmt text step)])
                       (next (list (json-object "role" "assistant" "content" text)
                                   (user-message (results-message results)))))
                     (finish "done" text step)))]))))))
