;; nib prelude: the helpers every strategy gets, at top level and in every
;; module. It loads into every engine, so it stays small.
;;
;; Host data arrives as association lists with string keys:
;;   {"ok": true, "text": "..."}  =>  (("ok" . #t) ("text" . "..."))
;; and JSON null arrives as `void` (json-null).

(provide json-null
         json-null?
         assoc-ref
         assoc-set
         assoc-remove
         json-object
         tool-ok?
         tool-text
         tool-refused?
         filter-map
         any?
         every?
         count-if
         take-at-most
         index-of
         string-truncate
         ;; hooks (docs/strategies.md)
         on
         on-at
         refuse
         refusal?
         offer
         offer?
         hook-points
         hooks-at
         hook-count
         hook-registry
         restrict-hooks-from!
         restrict-new-hooks!
         hook-tightens-only?
         in-hook?
         reset-hooks-depth!
         run-task-start
         run-before-model
         run-after-reply
         run-before-tool
         run-after-tool
         run-before-finish
         run-session-end)

(define json-null void)

;; (json-null? x): was x null in JSON?
(define (json-null? x)
  (void? x))

(define (entry-for? entry key)
  (and (pair? entry) (equal? (car entry) key)))

;; (assoc-ref alist key [default]): the value under key, or default (#f).
;; (case-lambda, not an optional argument: steel 0.8.3 drops a symbol passed
;; for an optional argument.)
(define (assoc-ref/default alist key default)
  (let loop ([xs alist])
    (cond
      [(null? xs) default]
      [(entry-for? (car xs) key) (cdr (car xs))]
      [else (loop (cdr xs))])))

(define assoc-ref
  (case-lambda
    [(alist key) (assoc-ref/default alist key #f)]
    [(alist key default) (assoc-ref/default alist key default)]))

;; (assoc-set alist key value): alist with key's value replaced in place, or
;; added at the end.
(define (assoc-set alist key value)
  (let loop ([xs alist]
             [seen '()])
    (cond
      [(null? xs) (reverse (cons (cons key value) seen))]
      [(entry-for? (car xs) key) (append (reverse (cons (cons key value) seen)) (cdr xs))]
      [else (loop (cdr xs) (cons (car xs) seen))])))

;; (assoc-remove alist key): alist without key's entries.
(define (assoc-remove alist key)
  (filter (lambda (entry) (not (entry-for? entry key))) alist))

;; (json-object "k1" v1 "k2" v2 ...): an association list, i.e. a JSON object.
(define (json-object . kvs)
  (let loop ([xs kvs]
             [out '()])
    (cond
      [(null? xs) (reverse out)]
      [(null? (cdr xs)) (error "json-object: expects key value pairs; the last key has no value")]
      [else (loop (cddr xs) (cons (cons (car xs) (cadr xs)) out))])))

;; A primitive's result: (("ok" . #t) ("text" . "...") ("decision" . "allow") ...)
(define (tool-ok? result)
  (equal? (assoc-ref result "ok" #f) #t))

(define (tool-text result)
  (assoc-ref result "text" ""))

(define (tool-refused? result)
  (equal? (assoc-ref result "refused" #f) #t))

;; (filter-map f xs): the non-#f results of (f x).
(define (filter-map f xs)
  (let loop ([xs xs]
             [out '()])
    (if (null? xs)
        (reverse out)
        (let ([y (f (car xs))]) (loop (cdr xs) (if y (cons y out) out))))))

;; (any? pred xs) / (every? pred xs)
(define (any? pred xs)
  (cond
    [(null? xs) #f]
    [(pred (car xs)) #t]
    [else (any? pred (cdr xs))]))

(define (every? pred xs)
  (cond
    [(null? xs) #t]
    [(pred (car xs)) (every? pred (cdr xs))]
    [else #f]))

;; (count-if pred xs): how many x satisfy pred.
(define (count-if pred xs)
  (let loop ([xs xs]
             [n 0])
    (if (null? xs)
        n
        (loop (cdr xs) (if (pred (car xs)) (+ n 1) n)))))

;; (take-at-most xs n): the first n elements, or all of a shorter list.
(define (take-at-most xs n)
  (let loop ([xs xs]
             [n n]
             [out '()])
    (if (or (null? xs) (<= n 0))
        (reverse out)
        (loop (cdr xs) (- n 1) (cons (car xs) out)))))

;; (index-of pred xs): the 0-based index of the first x satisfying pred, or #f.
(define (index-of pred xs)
  (let loop ([xs xs]
             [i 0])
    (cond
      [(null? xs) #f]
      [(pred (car xs)) i]
      [else (loop (cdr xs) (+ i 1))])))

;; (string-truncate s n): s, or its first n characters and "...".
(define (string-truncate s n)
  (if (<= (string-length s) n)
      s
      (string-append (substring s 0 n) "...")))
;; ------------------------------------------------------------------ hooks
;;
;; Hooks registered with `on` run at seven points (docs/strategies.md), in
;; registration order. They fail closed: `on` checks the procedure's
;; arity, and every call's result is checked; a result that is not one the
;; point allows is an error naming the hook's file and line, and what the
;; hook guarded (a model call, a tool call, the end of the task) does not
;; happen. A hook from a workspace's .nib/hooks/ may only tighten: its
;; before-tool hooks may refuse, its before-finish hooks may veto; anything
;; else it returns is ignored.

(define hook-points
  (list "task-start" "before-model" "after-reply" "before-tool" "after-tool" "before-finish" "session-end"))

;; What each point passes its hooks, and what they may return.
(define (hook-arity point)
  (if (member point (list "before-model" "after-tool")) 2 1))

(define (hook-args-text point)
  (cond
    [(equal? point "before-model") "(messages tools)"]
    [(equal? point "after-tool") "(call result)"]
    [(equal? point "after-reply") "(reply)"]
    [(equal? point "before-tool") "(call)"]
    [(equal? point "before-finish") "(text)"]
    [(equal? point "task-start") "(task)"]
    [else "(summary)"]))

(define (hook-returns-text point)
  (cond
    [(equal? point "task-start") "#f to keep the task, or a string: the task text the model gets instead"]
    [(equal? point "before-model") "the messages to send (a list of messages), (offer messages tools), or #f to keep them"]
    [(equal? point "after-reply") "the reply to act on (an object), or #f to keep it"]
    [(equal? point "before-tool") "the call to run (as it came, or rewritten), or (refuse why)"]
    [(equal? point "after-tool") "the result the model gets (an object), or #f to keep it"]
    [(equal? point "before-finish") "#f to let the task end, or a string: the task goes on and the model gets it"]
    [else "#f (its value is not used)"]))

;; Each hook: (point tightens-only? proc place), in registration order;
;; place is (start end source-id) of the procedure in its file, which the
;; host turns into file:line in errors (the marker in `hook-place`).
(define *hooks* (box '()))
;; Set once loading is over: hooks registered later (from inside a hook)
;; count as a workspace's.
(define *restrict-new* (box #f))
;; How many hooks are running (a hook's own model-reply or run-calls do
;; not run hooks again).
(define *hook-depth* (box 0))

(define (in-hook?) (> (unbox *hook-depth*) 0))
(define (reset-hooks-depth!) (set-box! *hook-depth* 0) #t)

(define (hook-place h) (list-ref h 3))

;; The marker the host replaces with the hook's file:line.
(define (place-text place)
  (if (and (list? place) (= (length place) 3))
      (string-append "<<hook@" (number->string (car place)) "@" (number->string (caddr place)) ">>")
      "an unknown place"))

(define (hook-error h message)
  (error (string-append (car h) " hook (registered at " (place-text (hook-place h)) ") " message)))

;; Exact arity and multi-arity of a procedure, or #f when unknown.
(define (arity-fits? proc n)
  (let ([a (%procedure-arity proc)])
    (cond
      [(not a) #t]
      [(car (cdr a)) (<= (- (car a) 1) n)]
      [else (= (car a) n)])))

(define (register-hook point proc place)
  (cond
    [(not (member point hook-points))
     (error (string-append "on (at " (place-text place) "): there is no hook point \""
                           (if (string? point) point "?")
                           "\"; the points are task-start, before-model, after-reply, before-tool, after-tool, before-finish, session-end"))]
    [(not (procedure? proc))
     (error (string-append "on (at " (place-text place) "): the hook for " point " must be a procedure " (hook-args-text point)))]
    [(not (arity-fits? proc (hook-arity point)))
     (error (string-append "on (at " (place-text place) "): a " point " hook takes "
                           (number->string (hook-arity point)) " argument"
                           (if (= (hook-arity point) 1) "" "s") " " (hook-args-text point)
                           ", but this procedure takes " (number->string (car (%procedure-arity proc)))))]
    [else
     (set-box! *hooks* (append (unbox *hooks*) (list (list point (unbox *restrict-new*) proc place))))
     point]))

;; (on point proc): call proc at point; see docs/strategies.md. A macro, so
;; that errors can name the file and line the hook was registered at.
(define-syntax on
  (syntax-rules ()
    [(on point proc) (register-hook point proc (#%syntax-span proc))]))

;; (on-at point proc place): `on` for code that registers hooks from a
;; procedure of its own (place: #f, or what #%syntax-span gave).
(define (on-at point proc place) (register-hook point proc place))

(define (hook-count) (length (unbox *hooks*)))

;; Each hook as (start source-id point), for `nib strategy check` (a
;; number first, so that it does not read as a JSON object).
(define (hook-registry)
  (map (lambda (h)
         (let ([place (hook-place h)])
           (if (and (list? place) (= (length place) 3))
               (list (car place) (caddr place) (car h))
               (list #f #f (car h)))))
       (unbox *hooks*)))

;; Hooks from index n on may only tighten (the host calls this after
;; loading a workspace's hook file; calling it can only take power away).
(define (restrict-hooks-from! n)
  (set-box! *hooks*
            (let loop ([xs (unbox *hooks*)] [i 0] [out '()])
              (if (null? xs)
                  (reverse out)
                  (loop (cdr xs) (+ i 1)
                        (cons (if (>= i n)
                                  (list (car (car xs)) #t (caddr (car xs)) (list-ref (car xs) 3))
                                  (car xs))
                              out)))))
  #t)

(define (restrict-new-hooks!) (set-box! *restrict-new* #t) #t)

(define (hook-tightens-only? h) (cadr h))

(define (hooks-at point)
  (filter (lambda (h) (equal? (car h) point)) (unbox *hooks*)))

;; (refuse why): what a before-tool hook returns to refuse a call; the
;; model gets why.
(define (refuse why)
  (if (string? why)
      (list (cons "refuse" why))
      (error "refuse: the reason must be a string (the model reads it)")))

(define (refusal? x)
  (and (list? x) (not (null? x)) (pair? (car x)) (equal? (car (car x)) "refuse")))

;; (offer messages tools): what a before-model hook returns to send
;; messages and offer only the tools named (a list of strings). A call to
;; a tool that was not offered is refused.
(define (offer messages tools)
  (cond
    [(not (list? messages)) (error "offer: the messages must be a list")]
    [(not (and (list? tools) (every? string? tools)))
     (error "offer: the tools must be a list of tool names (strings)")]
    [else (list (cons "offer-messages" messages) (cons "offer-tools" tools))]))

(define (offer? x)
  (and (list? x) (not (null? x)) (pair? (car x)) (equal? (car (car x)) "offer-messages")))

(define (object? x)
  (and (list? x) (every? (lambda (e) (and (pair? e) (string? (car e)))) x)))

(define (message-list? x)
  (and (list? x) (every? (lambda (m) (and (object? m) (string? (assoc-ref m "role" #f)))) x)))

(define (keep? out) (or (not out) (void? out)))

(define (describe-value x)
  (cond
    [(void? x) "nothing (void)"]
    [(boolean? x) (if x "#t" "#f")]
    [(string? x) (string-append "a string (\"" (string-truncate x 40) "\")")]
    [(number? x) (string-append "a number (" (number->string x) ")")]
    [(symbol? x) "a symbol"]
    [(procedure? x) "a procedure"]
    [(null? x) "an empty list"]
    [(list? x) "a list of another shape"]
    [else "another kind of value"]))

;; Calls one hook, counting the depth (a hook's own model-reply and
;; run-calls do not run hooks).
(define (call-hook h args)
  (if (= (unbox *hook-depth*) 0) (%hook-arm (place-text (hook-place h))) #f)
  (set-box! *hook-depth* (+ (unbox *hook-depth*) 1))
  (let ([out (apply (caddr h) args)])
    (set-box! *hook-depth* (- (unbox *hook-depth*) 1))
    (if (= (unbox *hook-depth*) 0) (%hook-disarm) #f)
    out))

(define (bad-result h out)
  (hook-error h (string-append "returned " (describe-value out) "; a " (car h) " hook returns "
                               (hook-returns-text (car h)))))

;; Threads value through the hooks at point: each gets (value extra ...)
;; and returns the new value, or #f / void to keep it; `valid?` checks a
;; new value.
(define (thread-hooks point value extras valid?)
  (let loop ([hs (hooks-at point)] [v value])
    (if (null? hs)
        v
        (let* ([h (car hs)]
               [out (call-hook h (cons v extras))])
          (cond
            [(keep? out) (loop (cdr hs) v)]
            [(not (valid? out)) (bad-result h out)]
            [(hook-tightens-only? h) (loop (cdr hs) v)]
            [else (loop (cdr hs) out)])))))

;; task-start: (hook task) -> #f, or the task text to use instead.
(define (run-task-start task)
  (reset-hooks-depth!)
  (thread-hooks "task-start" task '() string?))

;; before-model: (hook messages tools) -> messages, (offer messages tools)
;; or #f. Returns (messages . tools): tools is #f when no hook narrowed
;; them. The messages returned are what is sent and what the conversation
;; goes on from.
(define (run-before-model messages tools)
  (let loop ([hs (hooks-at "before-model")] [ms messages] [offered #f])
    (if (null? hs)
        (cons ms offered)
        (let* ([h (car hs)]
               [out (call-hook h (list ms (or offered tools)))])
          (cond
            [(or (keep? out) (hook-tightens-only? h)) (loop (cdr hs) ms offered)]
            [(offer? out)
             (let ([new-ms (assoc-ref out "offer-messages" '())])
               (if (message-list? new-ms)
                   (loop (cdr hs) new-ms (assoc-ref out "offer-tools" '()))
                   (bad-result h new-ms)))]
            [(message-list? out) (loop (cdr hs) out offered)]
            [else (bad-result h out)])))))

;; after-reply: (hook reply) -> reply
(define (run-after-reply reply)
  (thread-hooks "after-reply" reply '() object?))

;; before-tool: (hook call) -> the call (maybe rewritten) or (refuse why).
;; The first refusal wins; anything else is an error and the call does not
;; run.
(define (run-before-tool call)
  (let loop ([hs (hooks-at "before-tool")] [c call])
    (if (null? hs)
        c
        (let* ([h (car hs)]
               [out (call-hook h (list c))])
          (cond
            [(refusal? out) out]
            [(not (and (object? out) (string? (assoc-ref out "name" #f)))) (bad-result h out)]
            [(hook-tightens-only? h) (loop (cdr hs) c)]
            [else (loop (cdr hs) out)])))))

;; after-tool: (hook call result) -> result
(define (run-after-tool call result)
  (let loop ([hs (hooks-at "after-tool")] [r result])
    (if (null? hs)
        r
        (let* ([h (car hs)]
               [out (call-hook h (list call r))])
          (cond
            [(keep? out) (loop (cdr hs) r)]
            [(not (object? out)) (bad-result h out)]
            [(hook-tightens-only? h) (loop (cdr hs) r)]
            [else (loop (cdr hs) out)])))))

;; before-finish: (hook text) -> #f to let the task end, or a string: the
;; task goes on, with that string sent to the model. The first veto wins.
(define (run-before-finish text)
  (let loop ([hs (hooks-at "before-finish")])
    (if (null? hs)
        #f
        (let* ([h (car hs)]
               [out (call-hook h (list text))])
          (cond
            [(string? out) out]
            [(equal? out #f) (loop (cdr hs))]
            [else (bad-result h out)])))))

;; session-end: (hook summary) -> #f; summary holds "tasks" and "usage".
(define (run-session-end summary)
  (reset-hooks-depth!)
  (let loop ([hs (hooks-at "session-end")])
    (if (null? hs)
        #t
        (let* ([h (car hs)]
               [out (call-hook h (list summary))])
          (if (keep? out)
              (loop (cdr hs))
              (bad-result h out))))))
