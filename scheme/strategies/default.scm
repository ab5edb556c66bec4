;; The default strategy: ask the model, run the calls it makes, give it the
;; results, until it answers without calls or a budget runs out.
;;
;; (run task options) is what nib calls. options holds "max_steps" and
;; "max_tokens" (0: no token budget), "approve", "interactive", "set" (the
;; user's --set key=value pairs) and "history" (the messages of the
;; session's earlier tasks, in an interactive session). It returns an
;; object with "status" (done, step_limit, token_limit, error), "text",
;; "steps" and "messages" (the conversation, for the next task).
;;
;; The hooks registered with `on` (docs/strategies.md) run inside
;; `model-reply` and `run-calls`, defined here over the host's procedures,
;; so they run under any loop that calls these two, a strategy's own `run`
;; included; task-start and session-end are called by nib itself. A hook's
;; own model-reply and run-calls do not run hooks again.

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

;; A reply the token limit cut may end in a half-written call: say so and
;; let the model try again with less.
(define cut-note
  "Your last reply was cut off by the output token limit, so its tool calls were not run. Send smaller calls: split a large edit into several fs-edit calls, or write less text.")

;; ------------------------------------------------------------ the wrappers

;; The messages the last hooked model call sent (what the before-model
;; hooks made of them), for the loop to go on from.
(define sent-messages-box (box '()))
(define (sent-messages) (unbox sent-messages-box))

;; The names offered, narrowed by a hook's (offer ...) and by the caller's
;; own "tools" option: the tools both allow.
(define (narrow-tools hooked own)
  (if (list? own)
      (filter (lambda (t) (member t own)) hooked)
      hooked))

(define (model-reply/hooked messages step options)
  (if (in-hook?)
      ;; A hook's own call: no step of the loop.
      (host-own-model-reply messages step options)
      (let* ([asked (run-before-model messages (assoc-ref options "tools" (tool-names)))]
             [ms (car asked)]
             [opts (if (cdr asked)
                       (assoc-set options "tools" (narrow-tools (cdr asked) (assoc-ref options "tools" #f)))
                       options)]
             [reply (begin (set-box! sent-messages-box ms) (host-model-reply ms step opts))])
        (if (assoc-ref reply "error" #f)
            reply
            (run-after-reply reply)))))

;; (model-reply messages step [options]): one model call, with the
;; before-model and after-reply hooks around it.
(define model-reply
  (case-lambda
    [(messages step) (model-reply/hooked messages step '())]
    [(messages step options) (model-reply/hooked messages step options)]))

;; (run-calls calls step): a reply's calls, with the before-tool and
;; after-tool hooks around them.
(define (run-calls tool-calls step)
  (if (in-hook?)
      (host-run-calls tool-calls step)
      (run-reply-calls tool-calls step)))

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
         [ran (if (null? runnable) '() (host-run-calls runnable step))])
    (let loop ([cs calls] [ks checked] [rs ran] [out '()])
      (cond
        [(null? cs) (reverse out)]
        [(refusal? (car ks))
         (loop (cdr cs) (cdr ks) rs
               (cons (refused-result (car cs) (assoc-ref (car ks) "refuse" "")) out))]
        [else
         (loop (cdr cs) (cdr ks) (cdr rs)
               (cons (run-after-tool (car ks) (car rs)) out))]))))

;; A model that makes the same calls again and again: told once, then
;; stopped.
(define repeat-note-at 3)
(define repeat-stop-at 5)

(define (calls-signature reply)
  (map (lambda (c) (list (assoc-ref c "name" "") (assoc-ref c "arguments" "")))
       (assoc-ref reply "tool_calls" '())))

(define (repeat-note n)
  (string-append "You have made exactly the same tool call" " " (number->string n)
                 " times in a row, and got the same kind of answer. Do not repeat it: use what it returned, try something else, or answer."))

(define (session-tokens)
  (let ([u (task-usage)])
    (+ (assoc-ref u "prompt" 0) (assoc-ref u "completion" 0))))

(define (run task options)
  (let ([max-steps (assoc-ref options "max_steps" 30)]
        [max-tokens (assoc-ref options "max_tokens" 0)])
    (let loop ([messages (append (assoc-ref options "history" '()) (list (user-message task)))]
               [step 1]
               [last-calls '()]
               [repeats 0])
      (set-box! conversation messages)
      (set-box! loop-step step)
      (if (> step max-steps)
          (finish "step_limit" (string-append "stopped after " (number->string max-steps) " steps") max-steps)
          (let* ([reply (reply-with-retry messages step)]
                 [asked (sent-messages)])
            (cond
              [(assoc-ref reply "error" #f)
               (finish (if (equal? (assoc-ref reply "kind" "") "token_limit") "token_limit" "error")
                       (assoc-ref reply "error" "")
                       step)]
              [(equal? (assoc-ref reply "finish" "") "length")
               (loop (append asked (list (json-object "role" "assistant" "content" (assoc-ref reply "text" ""))
                                         (user-message cut-note)))
                     (+ step 1) '() 0)]
              [(null? (assoc-ref reply "tool_calls" '()))
               (let* ([text (assoc-ref reply "text" "")]
                      [veto (run-before-finish text)])
                 (if veto
                     (begin
                       (strategy-event "continue" veto)
                       (loop (append asked (list (json-object "role" "assistant" "content" text)
                                                 (user-message veto)))
                             (+ step 1) '() 0))
                     (begin
                       (set-box! conversation
                                 (append asked (list (json-object "role" "assistant" "content" text))))
                       (finish "done" text step))))]
              [else
               (let* ([calls (calls-signature reply)]
                      [same (if (equal? calls last-calls) (+ repeats 1) 1)])
                 (if (>= same repeat-stop-at)
                     (begin
                       (strategy-event "stop" "the model repeated the same call")
                       (finish "error"
                               (string-append "stopped: the model made the same call ("
                                              (car (car calls)) ") " (number->string same)
                                              " times in a row")
                               step))
                     (let* ([results (run-calls (assoc-ref reply "tool_calls" '()) step)]
                            [next (append asked
                                          (list (assistant-message reply))
                                          (map tool-message results)
                                          (if (= same repeat-note-at)
                                              (begin (strategy-event "repeat" (repeat-note same))
                                                     (list (user-message (repeat-note same))))
                                              '()))])
                       (set-box! conversation next)
                       (if (and (> max-tokens 0) (>= (session-tokens) max-tokens))
                           (finish "token_limit" (string-append "used " (number->string (session-tokens)) " tokens") step)
                           (loop next (+ step 1) calls same)))))]))))))
