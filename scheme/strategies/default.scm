;; The default strategy: ask the model, run the calls it makes, give it the
;; results, until it answers without calls or a budget runs out. The hooks
;; registered with `on` (docs/strategies.md) run at five points of it:
;; before-model, after-reply, before-tool, after-tool, before-finish.
;;
;; (run task options) is what nib calls. options holds "max_steps" and
;; "max_tokens" (0: no token budget), "approve", "interactive", "set" (the
;; user's --set key=value pairs) and "history" (the messages of the
;; session's earlier tasks, in an interactive session). It returns an
;; object with "status" (done, step_limit, token_limit, error), "text",
;; "steps" and "messages" (the conversation, for the next task).

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

;; The conversation so far, handed back with the outcome so that the
;; next task of an interactive session continues it.
(define conversation (box '()))

;; The step the loop is at, for hooks that log calls of their own
;; (`(apply-text format text (unbox loop-step))`).
(define loop-step (box 0))

(define (finish status text steps)
  (json-object "status" status "text" text "steps" steps "messages" (unbox conversation)))

(define (reply-tokens reply)
  (let ([usage (assoc-ref reply "usage" '())])
    (+ (assoc-ref usage "prompt" 0) (assoc-ref usage "completion" 0))))

;; A reply the token limit cut may end in a half-written call: say so and
;; let the model try again with less.
(define cut-note
  "Your last reply was cut off by the output token limit, so its tool calls were not run. Send smaller calls: split a large edit into several fs-edit calls, or write less text.")

;; One model call, retried once when the stream was cut or timed out.
(define (reply-with-retry messages step)
  (let ([reply (model-reply messages step)])
    (if (member (assoc-ref reply "kind" "") (list "stream_cut" "timeout" "transient"))
        (model-reply messages step)
        reply)))

;; The result a refused call gets: the model reads why.
(define (refused-result call why)
  (strategy-event "refuse" (string-append (assoc-ref call "name" "") ": " why))
  (json-object "id" (assoc-ref call "id" "")
               "name" (assoc-ref call "name" "")
               "ok" #f
               "refused" #t
               "kind" "refused"
               "text" (string-append "refused by the session's strategy: " why)))

;; A reply's calls through the before-tool and after-tool hooks: refused
;; calls never run; the others run together (run-calls keeps read-only
;; calls of one reply concurrent). One result per call, in order.
(define (run-reply-calls tool-calls step)
  (let* ([calls (map call-data tool-calls)]
         [checked (map run-before-tool calls)]
         [runnable (filter (lambda (c) (not (refusal? c))) checked)]
         [ran (if (null? runnable) '() (run-calls runnable step))])
    (let loop ([cs calls] [ks checked] [rs ran] [out '()])
      (cond
        [(null? cs) (reverse out)]
        [(refusal? (car ks))
         (loop (cdr cs) (cdr ks) rs
               (cons (refused-result (car cs) (assoc-ref (car ks) "refuse" "")) out))]
        [else
         (loop (cdr cs) (cdr ks) (cdr rs)
               (cons (run-after-tool (car ks) (car rs)) out))]))))

(define (run task options)
  (let ([max-steps (assoc-ref options "max_steps" 30)]
        [max-tokens (assoc-ref options "max_tokens" 0)])
    (let loop ([messages (append (assoc-ref options "history" '()) (list (user-message task)))]
               [step 1]
               [tokens 0])
      (set-box! conversation messages)
      (set-box! loop-step step)
      (if (> step max-steps)
          (finish "step_limit" (string-append "stopped after " (number->string max-steps) " steps") max-steps)
          (let* ([asked (run-before-model messages (tool-names))]
                 [reply (run-after-reply (reply-with-retry asked step))]
                 [used (+ tokens (reply-tokens reply))])
            (cond
              [(assoc-ref reply "error" #f)
               (finish (if (equal? (assoc-ref reply "kind" "") "token_limit") "token_limit" "error")
                       (assoc-ref reply "error" "")
                       step)]
              [(equal? (assoc-ref reply "finish" "") "length")
               (loop (append asked (list (json-object "role" "assistant" "content" (assoc-ref reply "text" ""))
                                         (user-message cut-note)))
                     (+ step 1)
                     used)]
              [(null? (assoc-ref reply "tool_calls" '()))
               (let* ([text (assoc-ref reply "text" "")]
                      [veto (run-before-finish text)])
                 (if veto
                     (begin
                       (strategy-event "continue" veto)
                       (loop (append asked (list (json-object "role" "assistant" "content" text)
                                                 (user-message veto)))
                             (+ step 1)
                             used))
                     (begin
                       (set-box! conversation
                                 (append asked (list (json-object "role" "assistant" "content" text))))
                       (finish "done" text step))))]
              [else
               (let* ([results (run-reply-calls (assoc-ref reply "tool_calls" '()) step)]
                      [next (append asked
                                    (list (assistant-message reply))
                                    (map tool-message results))])
                 (if (and (> max-tokens 0) (>= used max-tokens))
                     (finish "token_limit" (string-append "used " (number->string used) " tokens") step)
                     (loop next (+ step 1) used)))]))))))
