;; The default strategy: ask the model, run the calls it makes, give it the
;; results, until it answers without calls or a budget runs out.
;;
;; (run task options) is what nib calls. options holds "max_steps" and
;; "max_tokens" (0: no token budget). It returns an object with "status"
;; (done, step_limit, token_limit, error), "text" and "steps".

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

(define (run task options)
  (let ([max-steps (assoc-ref options "max_steps" 30)]
        [max-tokens (assoc-ref options "max_tokens" 0)])
    (let loop ([messages (list (user-message task))]
               [step 1]
               [tokens 0])
      (if (> step max-steps)
          (finish "step_limit" (string-append "stopped after " (number->string max-steps) " steps") max-steps)
          (let ([reply (reply-with-retry messages step)])
            (cond
              [(assoc-ref reply "error" #f)
               (finish (if (equal? (assoc-ref reply "kind" "") "token_limit") "token_limit" "error")
                       (assoc-ref reply "error" "")
                       step)]
              [(equal? (assoc-ref reply "finish" "") "length")
               (loop (append messages (list (json-object "role" "assistant" "content" (assoc-ref reply "text" ""))
                                            (user-message cut-note)))
                     (+ step 1)
                     (+ tokens (reply-tokens reply)))]
              [(null? (assoc-ref reply "tool_calls" '()))
               (finish "done" (assoc-ref reply "text" "") step)]
              [else
               (let* ([results (run-calls (assoc-ref reply "tool_calls" '()) step)]
                      [used (+ tokens (reply-tokens reply))]
                      [next (append messages
                                    (list (assistant-message reply))
                                    (map tool-message results))])
                 (if (and (> max-tokens 0) (>= used max-tokens))
                     (finish "token_limit" (string-append "used " (number->string used) " tokens") step)
                     (loop next (+ step 1) used)))]))))))
