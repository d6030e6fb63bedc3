"""Word lists for the heuristic extractor: general knowledge, not tuned to any corpus.

Pure data built once at import from literals (no I/O). Lookups are by lower-cased
surface form. Each tool carries a *kind* ("database", "editor", ...): facts about
"I use X" are keyed by the kind, so "I use Vim" and later "I use Emacs" compete
for one slot ("editor").

A leading ``~`` marks a name that is also an ordinary English word ("go",
"black", "slack"): it counts only when written with a capital letter.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from typing import Final


def _split(text: str, sep: str = ",") -> Iterable[str]:
    return (part.strip() for part in text.split(sep) if part.strip())


_TOOL_KINDS: Final[dict[str, str]] = {
    "programming language": (
        "python, javascript, typescript, ~go, golang, ~rust, java, kotlin, ~swift, c#, c++, "
        "~c, ruby, php, scala, elixir, erlang, haskell, ocaml, f#, clojure, ~julia, ~r, matlab, "
        "perl, lua, ~dart, zig, nim, fortran, cobol, objective-c, groovy, bash, powershell, "
        "sql, ~crystal, solidity, verilog, vhdl, assembly, ~elm, purescript, racket, "
        "common lisp, scheme, prolog, ~mojo, ~v, gleam, sas, ~stata, vba, html, css, sass, "
        "scss, webassembly, wasm"
    ),
    "frontend framework": (
        "react, ~vue, vue.js, vuejs, angular, angularjs, svelte, sveltekit, ~solid, solidjs, "
        "~ember, ~backbone, jquery, next.js, nextjs, nuxt, nuxt.js, ~remix, ~astro, ~gatsby, "
        "qwik, ~preact, ~alpine.js, alpine.js, alpinejs, htmx, ~lit, ~stimulus, ~hotwire, "
        "redux, redux toolkit, mobx, zustand, ~recoil, react native, jetpack compose, swiftui, "
        "uikit, ~flutter, ~ionic, xamarin, .net maui, ~electron, tauri, ~combine"
    ),
    "css framework": (
        "tailwind, tailwind css, tailwindcss, bootstrap, bulma, material ui, mui, chakra ui, "
        "shadcn, shadcn/ui, styled-components, ~emotion, ant design, foundation css"
    ),
    "backend framework": (
        "django, django rest framework, ~flask, fastapi, ~express, express.js, nestjs, "
        "~koa, hapi, ~rails, ruby on rails, sinatra, laravel, symfony, ~spring, spring boot, "
        "quarkus, micronaut, asp.net, asp.net core, .net, ~phoenix liveview, phoenix liveview, "
        "~gin, ~echo, ~fiber, actix, axum, ~rocket, ktor, starlette, litestar, ~pyramid, ~tornado, "
        "aiohttp, node.js, nodejs, ~node, deno, ~bun, hono, strapi, graphql, grpc, trpc, "
        "apollo server, hibernate, prisma, ~drizzle, drizzle orm, sqlalchemy, typeorm, "
        "sequelize, alembic, pydantic, celery, sidekiq, zod"
    ),
    "database": (
        "postgresql, postgres, oracle, mysql, mariadb, sqlite, mongodb, mongo, cassandra, scylladb, "
        "dynamodb, cockroachdb, oracle database, sql server, mssql, couchdb, couchbase, neo4j, "
        "arangodb, influxdb, timescaledb, clickhouse, firestore, firebase, supabase, "
        "planetscale, ~neon, aurora, aurora mysql, aurora postgresql, cosmos db, cosmosdb, "
        "duckdb, rocksdb, leveldb, tidb, yugabytedb, questdb, surrealdb, ~fauna, rds, "
        "cloud sql, spanner, bigtable, pgbouncer, etcd"
    ),
    "cache": "redis, ~valkey, memcached, redis streams, hazelcast, dragonfly",
    "search engine": ("elasticsearch, opensearch, solr, meilisearch, typesense, algolia, vespa"),
    "vector database": ("pgvector, pinecone, weaviate, qdrant, milvus, ~chroma, chromadb, faiss, lancedb"),
    "data warehouse": (
        "snowflake, bigquery, redshift, databricks, ~hive, presto, trino, delta lake, "
        "~iceberg, apache iceberg, hudi, duckdb"
    ),
    "data processing": (
        "~spark, apache spark, spark streaming, pyspark, hadoop, ~flink, apache flink, ~beam, "
        "apache beam, dbt, airbyte, fivetran, ~stitch, pandas, polars, numpy, scipy, dask, "
        "~ray, ~arrow, apache arrow, great expectations, kafka streams, kafka connect"
    ),
    "workflow orchestration": (
        "airflow, apache airflow, dagster, ~prefect, ~luigi, ~temporal, kubeflow, argo workflows"
    ),
    "message broker": ("kafka, apache kafka, ~pulsar, kinesis, rabbitmq, nats, activemq, zeromq, sqs, sns, pub/sub"),
    "bi tool": ("looker, tableau, power bi, metabase, ~superset, apache superset, ~mode, redash"),
    "spreadsheet": "excel, microsoft excel, google sheets, airtable, numbers",
    "notebook": "jupyter, jupyterlab, ~colab, google colab, jupyter notebook",
    "experiment tracking": "mlflow, weights & biases, wandb",
    "ml framework": (
        "pytorch, tensorflow, ~keras, jax, scikit-learn, sklearn, xgboost, lightgbm, catboost, "
        "hugging face, huggingface, hugging face transformers, ~transformers, langchain, "
        "llamaindex, llama index, spacy, nltk, opencv, onnx, tensorrt, vllm, ollama, dspy, "
        "langgraph, stable diffusion"
    ),
    "llm": (
        "openai api, ~bert, gpt-3, gpt-3.5, gpt-4, gpt-4o, gpt-4.1, gpt-5, chatgpt, ~claude, "
        "~gemini, ~llama, llama 2, llama 3, ~mistral, mixtral, ~whisper, dall-e, midjourney, "
        "perplexity"
    ),
    "coding assistant": "~copilot, github copilot, ~cursor",
    "cloud platform": (
        "aws, amazon web services, gcp, google cloud, google cloud platform, azure, "
        "microsoft azure, digitalocean, digital ocean, linode, hetzner, ovh, vultr, heroku, "
        "vercel, netlify, fly.io, ~render, ~railway, cloudflare workers, cloudflare pages, "
        "ec2, s3, ~lambda, aws lambda, ecs, eks, fargate, gke, aks, cloud run, app engine, "
        "azure functions, cloudfront, route 53, backblaze, backblaze b2, openshift, "
        "github pages"
    ),
    "containers": "docker, docker desktop, docker compose, podman",
    "container orchestration": "kubernetes, k8s, k3s, minikube, ~nomad, ~helm",
    "infrastructure as code": ("terraform, opentofu, pulumi, cdk, aws cdk, cloudformation, ~packer, ~vagrant"),
    "configuration management": "ansible, ~chef, ~puppet, saltstack",
    "web server": ("nginx, ~apache, apache httpd, ~caddy, ~traefik, haproxy, ~kong"),
    "service mesh": "~envoy, istio, linkerd, ~consul",
    "secrets management": "~vault, hashicorp vault, 1password, bitwarden, lastpass",
    "identity provider": "keycloak, okta, auth0",
    "gitops": "argo cd, argocd, ~flux, fluxcd",
    "network": (
        "tailscale, wireguard, openvpn, cloudflare, openssl, let's encrypt, letsencrypt, "
        "systemd, proxmox, vmware, virtualbox"
    ),
    "ci/cd": (
        "jenkins, github actions, gitlab ci, circleci, travis ci, buildkite, ~bamboo, "
        "teamcity, ~drone, azure devops, bitbucket pipelines, tekton, spinnaker"
    ),
    "observability": (
        "datadog, prometheus, grafana, ~loki, ~tempo, jaeger, zipkin, opentelemetry, "
        "new relic, sentry, pagerduty, opsgenie, splunk, ~elk, kibana, logstash, "
        "fluentd, fluent bit, honeycomb, dynatrace, appdynamics, statuspage"
    ),
    "version control": ("git, github, gitlab, bitbucket, ~mercurial, svn, subversion, ~perforce, gerrit"),
    "editor": (
        "vim, neovim, nvim, emacs, vs code, vscode, visual studio code, visual studio, "
        "intellij, intellij idea, pycharm, webstorm, goland, ~rider, clion, android studio, "
        "xcode, sublime text, ~sublime, ~atom, notepad++, ~nano, ~helix, ~zed, ~eclipse, netbeans, "
        "jetbrains, jupyter notebook"
    ),
    "package manager": (
        "npm, yarn, pnpm, pip, pipenv, ~poetry, uv, conda, mamba, pip-tools, homebrew, "
        "~brew, ~apt, ~cargo, maven, gradle, ~nx, lerna, turborepo, bazel, ~make, cmake, "
        "webpack, vite, esbuild, ~rollup, ~parcel, ~babel, swc"
    ),
    "testing tool": (
        "pytest, unittest, ~jest, vitest, ~mocha, ~chai, jasmine, cypress, playwright, "
        "selenium, puppeteer, junit, testng, rspec, minitest, hypothesis, storybook, "
        "postman, insomnia, k6, locust, jmeter"
    ),
    "linter": (
        "eslint, prettier, ~black, isort, ruff, flake8, pylint, mypy, pyright, rubocop, "
        "golangci-lint, clippy, rustfmt, gofmt, stylelint, biome, sonarqube, tslint"
    ),
    "operating system": (
        "linux, ubuntu, debian, fedora, arch linux, centos, rhel, alpine linux, nixos, "
        "macos, mac os, os x, windows, windows xp, ios, android, "
        "freebsd, chromeos, wsl, wsl2"
    ),
    "notes app": "~notion, obsidian, evernote, onenote, ~roam, logseq",
    "task tracker": ("todoist, ~things, trello, asana, jira, ~linear, clickup, monday.com, basecamp"),
    "chat": ("~slack, microsoft teams, ms teams, discord, telegram, whatsapp, ~signal"),
    "video calls": "~zoom, google meet, ~loom, calendly",
    "docs": (
        "confluence, google docs, google drive, ~drive, dropbox, google workspace, "
        "microsoft 365, office 365, ~outlook, gmail"
    ),
    "design tool": (
        "~miro, figma, ~sketch, canva, adobe photoshop, photoshop, illustrator, indesign, "
        "premiere, after effects, lightroom, final cut pro, davinci resolve, blender"
    ),
    "game engine": "~unity, unreal engine, ~godot",
    "personal app": ("~alfred, ~spotlight, duolingo, ~anki, coursera, udemy, splitwise, ynab, ~mint, spotify, strava"),
    "crm": "salesforce, hubspot, pipedrive, zendesk, intercom, freshdesk",
    "email service": "mailchimp, convertkit, klaviyo, sendgrid, mailgun, postmark, twilio",
    "payments": "stripe, paypal, ~square, adyen, braintree, ~wise",
    "accounting": "quickbooks, xero, freshbooks, netsuite, ~sap, workday, bamboohr, gusto, rippling, docusign",
    "website platform": (
        "shopify, woocommerce, wordpress, squarespace, wix, webflow, ~ghost, ~hugo, jekyll, eleventy, retool"
    ),
    "product analytics": (
        "launchdarkly, ~segment, mixpanel, amplitude, google analytics, hotjar, posthog, "
        "optimizely, zapier, make.com, n8n"
    ),
    "command-line tool": (
        "grep, ripgrep, sed, awk, curl, wget, jq, fzf, tmux, zsh, oh my zsh, ~fish, htop, "
        "ffmpeg, imagemagick, pandoc, kubectl, gh, httpie, rsync, cron, netcat, nmap, "
        "wireshark, tcpdump, strace, gdb, valgrind, lldb, iterm2, iterm, ~warp, alacritty, "
        "~kitty, wezterm, ghostty"
    ),
    "hardware": (
        "raspberry pi, arduino, esp32, ~m1, ~m2, ~m3, macbook, macbook pro, "
        "thinkpad, iphone, ipad, kindle, nvidia jetson"
    ),
}

_ORGANIZATIONS: Final[str] = (
    "google, alphabet, microsoft, ~apple, amazon, ~meta, facebook, netflix, ibm, intel, amd, "
    "nvidia, oracle, salesforce, adobe, cisco, ~uber, lyft, airbnb, spotify, shopify, stripe, "
    "atlassian, github, gitlab, openai, anthropic, deepmind, google deepmind, hugging face, "
    "mozilla, cloudflare, hashicorp, jetbrains, red hat, ~canonical, vmware, databricks, "
    "snowflake, mongodb, ~elastic, confluent, twilio, datadog, dropbox, slack, ~zoom, "
    "~twitter, x corp, linkedin, tiktok, bytedance, alibaba, tencent, baidu, huawei, xiaomi, "
    "samsung, ~lg, sony, nintendo, toyota, honda, siemens, bosch, sap, philips, ericsson, "
    "nokia, volkswagen, bmw, mercedes-benz, airbus, boeing, tesla, spacex, infosys, tcs, "
    "tata consultancy services, wipro, hcl, reliance, flipkart, zomato, swiggy, paytm, "
    "~grab, gojek, ~sea, shopee, jumia, andela, safaricom, "
    "mercadolibre, mercado libre, nubank, rappi, yandex, kaspersky, jetbrains, klarna, "
    "zalando, booking.com, adyen, asml, ~wise, revolut, monzo, n26, deliveroo, "
    "ocado, deloitte, pwc, kpmg, ~ey, ernst & young, accenture, mckinsey, bcg, "
    "bain, capgemini, goldman sachs, jpmorgan, jp morgan, morgan stanley, barclays, hsbc, "
    "citi, citibank, ~visa, mastercard, american express, paypal, ebay, walmart, ~target, "
    "ikea, unilever, nestle, pfizer, moderna, nasa, cern, unicef, ~mit, stanford, "
    "harvard, oxford, cambridge, eth zurich, epfl, berkeley, carnegie mellon, y combinator, "
    "sequoia, sequoia capital, andreessen horowitz, a16z, ~accel, softbank, tiger global, "
    "ubisoft, spotify, ~king, rovio, supercell, epic games, ~valve, riot games, "
    "etsy, instacart, doordash, coinbase, robinhood, plaid, ~square, ~block, "
    "gusto, notion labs, figma, canva, atlassian, ~miro, vercel, netlify, supabase"
)

# Names that are first of all a company even though people also "use" them.
_PRIMARILY_ORGANIZATIONS: Final[frozenset[str]] = frozenset(
    _split(
        "google, microsoft, apple, amazon, meta, facebook, ibm, intel, oracle corporation, "
        "openai, anthropic, jetbrains, mozilla, cloudflare, hashicorp, atlassian, hugging "
        "face, spotify"
    )
)

_CONCEPTS: Final[str] = (
    "tdd, test-driven development, bdd, behavior-driven development, ddd, "
    "domain-driven design, microservices, microservice architecture, monolith, "
    "modular monolith, event sourcing, cqrs, crud, ~rest, restful, soa, "
    "event-driven architecture, serverless, agile, ~scrum, kanban, ~lean, ~xp, "
    "extreme programming, devops, devsecops, gitops, mlops, dataops, finops, ci/cd, "
    "continuous integration, continuous delivery, continuous deployment, "
    "trunk-based development, gitflow, pair programming, mob programming, "
    "clean architecture, hexagonal architecture, onion architecture, "
    "solid principles, ~dry, ~kiss, yagni, dependency injection, inversion of control, "
    "functional programming, object-oriented programming, oop, reactive programming, "
    "infrastructure as code, iac, chaos engineering, observability, "
    "site reliability engineering, blameless postmortems, "
    "blue-green deployment, blue-green deployments, canary releases, canary deployments, "
    "a/b testing, zero trust, zero-trust, least privilege, shift left, data mesh, "
    "lakehouse, data lake, etl, elt, machine learning, deep learning, reinforcement "
    "learning, transfer learning, fine-tuning, rag, retrieval-augmented generation, "
    "prompt engineering, okrs, okr, design thinking, "
    "six sigma, jobs to be done, inner source, twelve-factor app, 12-factor, "
    "outbox pattern, saga pattern, strangler fig, circuit breaker, "
    "websockets, oauth, oauth2, openid connect, jwt, "
    "sso, rbac, gdpr, hipaa, soc 2, pci dss, "
    "progressive web apps, pwa, server-side rendering, ssr, static site generation, "
    "jamstack, spaced repetition, pomodoro, getting things done, gtd, inbox zero, "
    "intermittent fasting, stoicism"
)

_GIVEN_NAMES: Final[str] = (
    # English-speaking world
    "james john robert michael david dave william bill richard thomas tom charles joseph joe "
    "christopher chris daniel dan matthew matt anthony mark steven steve paul andrew andy "
    "joshua kevin brian george edward ed ryan jacob gary nicholas nick eric jonathan jon "
    "stephen larry justin scott brandon benjamin ben samuel sam frank gregory greg raymond "
    "alexander alex patrick jack dennis jerry tyler aaron henry adam nathan zach peter "
    "kyle noah ethan jeremy walter christian keith roger terry sean austin arthur lawrence "
    "jesse dylan bryan jordan billy bruce albert gabriel logan alan juan wayne ralph roy "
    "eugene randy vincent russell louis philip bobby johnny bradley liam oliver lucas "
    "mason owen caleb isaac luke connor evan ian colin simon graham neil stuart gavin "
    "marcus malik jamal darnell tyrone andre dwayne "
    "mary patricia jennifer jen linda elizabeth liz barbara susan jessica sarah karen "
    "nancy lisa betty margaret sandra ashley kimberly emily donna michelle dorothy carol "
    "amanda melissa deborah stephanie rebecca sharon laura cynthia kathleen amy angela "
    "shirley anna brenda pamela emma nicole helen samantha katherine kate christine debra "
    "rachel carolyn janet catherine maria heather diane ruth julie olivia joyce virginia "
    "julia victoria kelly lauren christina joan evelyn judith megan andrea cheryl hannah "
    "jacqueline martha gloria teresa ann sara madison frances kathryn janice jean abigail "
    "alice judy sophia sophie grace denise amber doris marilyn danielle beverly isabella "
    "theresa diana natalie brittany charlotte marie kayla alexis lori chloe zoe ella "
    "ava mia amelia harper ellie lily lucy claire ebony keisha tamika latoya aaliyah "
    "esther dolores naomi miriam leah "
    # Irish, Scottish, Welsh
    "siobhan aoife niamh ciara saoirse sinead orla roisin declan cian oisin eoin seamus "
    "padraig ronan fionn callum ewan hamish morag rhys gethin cerys bronwen "
    # Spanish, Portuguese, Latin American
    "jose luis carlos jorge miguel pedro alejandro manuel francisco javier antonio "
    "fernando sergio pablo diego mateo santiago sebastian andres ricardo eduardo rafael "
    "raul alberto enrique hector ramon emilio joaquin thiago joao tiago rodrigo gustavo "
    "felipe bruno leonardo gabriela sofia lucia valentina camila isabel carmen rosa ana "
    "marta elena paula laura daniela fernanda mariana beatriz juliana carolina alejandra "
    "esperanza guadalupe ximena catalina renata luisa adriana patricia veronica monica "
    "paulo marcelo vinicius leticia larissa "
    # French, Italian, German, Dutch, Nordic
    "jean pierre louis antoine nicolas julien mathieu francois philippe thierry olivier "
    "sebastien guillaume camille chloe manon amelie margaux juliette aurelie celine "
    "giulia giuseppe marco luca matteo alessandro francesca chiara federica valentina "
    "lorenzo giovanni stefano davide elisa martina sara paolo roberto "
    "hans jurgen klaus stefan tobias lukas jonas felix maximilian moritz florian sebastian "
    "katrin anke birgit heike ulrike lena lea mia hanna johanna greta frieda "
    "jan pieter sander bram daan thijs sanne femke lotte anouk "
    "lars sven björn bjorn erik nils magnus anders olaf henrik mikael johan ingrid astrid "
    "freya sigrid karin maja linnea elin annika liv kirsten mette "
    # Slavic, Baltic, Greek, Hungarian
    "ivan dmitri dmitry sergei sergey alexei alexey andrei mikhail nikolai vladimir igor "
    "oleg yuri pavel anton artem maxim olga natasha natalia tatiana svetlana anastasia "
    "ekaterina irina elena marina yulia daria ksenia tomasz piotr pawel krzysztof marcin "
    "michal jakub agnieszka katarzyna magdalena joanna zofia ewa petr jiri tereza "
    "ondrej marek milan dusan nikola ana jelena dragan bogdan andrija "
    "giorgos nikos dimitris kostas yannis eleni maria sofia katerina "
    "laszlo zoltan istvan gabor balazs eszter zsofia reka "
    # Turkish, Arabic, Persian, Hebrew
    "ahmet mehmet mustafa ali emre burak can cem murat elif zeynep ayse fatma merve ece "
    "mohammed mohamed muhammad ahmed omar youssef yusuf hassan hussein khalid karim tariq "
    "amir samir nabil rami ziad faisal hamza bilal ibrahim ismail mahmoud mostafa "
    "fatima aisha leila layla noor nour yasmin yasmine salma mariam zainab huda hana rania "
    "dina lina reem amira sara "
    "reza mehdi hossein dariush arash babak parisa shirin niloufar neda maryam roya "
    "david yosef avi eitan noam yael tamar noa shira maya ronit "
    # South Asian
    "arjun rahul rohan vikram ravi raj rajesh suresh ramesh anil sunil amit sanjay vijay "
    "ajay deepak nikhil kiran aditya varun karthik krishna ganesh manish harish prakash "
    "srinivas venkat arun ashok dev "
    "priya ananya deepa pooja neha anjali kavya divya shreya aishwarya lakshmi meera "
    "sunita anita kavita rekha radha shruti swati nisha ritu sneha priyanka "
    "tanvir nasrin farhan rafiq sadia rumana imran ayesha bilal usman zara "
    "nuwan chamari dilshan "
    # East and South-East Asian
    "wei li ming jun hao yang lei jie chen lin xin mei ling ying hui yan fang jing xiaoming "
    "zhang liu wang huang zhou "
    "hiroshi takeshi kenji akira haruto yuto sota ren daiki kenta ryo shota takumi yuki "
    "aiko yumi sakura hana yui haruka akiko keiko naoko emi misaki rin "
    "minjun min-jun jiwoo ji-woo jaewon jae-won seojun doyun hyun sungmin jisoo soyeon "
    "yuna minji seoyeon eunji hyejin "
    "linh nguyen thao huong lan mai anh minh tuan duc hung quang "
    "somchai niran kanya ploy "
    "budi agus dewi sari putri rizki "
    "jose maria juan angelo mark "
    # African
    "oluwaseun seun olusegun tunde babajide chinedu chidi emeka obinna ikenna ngozi "
    "chiamaka adaeze funmilayo funmi folake yetunde bisi amaka nneka femi kemi tolu "
    "kwame kofi kwabena kwaku yaw ama akosua abena efua adwoa "
    "wanjiru wambui njeri kamau otieno achieng akinyi baraka jabari zuri "
    "thabo sipho bongani themba mandla lerato zanele nomvula thandiwe naledi palesa "
    "tendai tatenda chipo rudo farai "
    "abebe haile selam tigist meron dawit "
    "amara adama moussa fatou aminata ousmane mamadou ibrahima "
    # Central Asian, Caucasus
    "rustam aziz timur dilnoza gulnara nurlan aigerim giorgi nino levan "
    # Pacific, Indigenous, misc
    "aroha tane mere kai leilani keanu "
)

_ORG_SUFFIXES: Final[frozenset[str]] = frozenset(
    _split(
        "inc inc. ltd ltd. llc llp corp corp. corporation co co. gmbh ag as a/s ab sa s.a. bv "
        "b.v. nv plc pty oy spa srl kk labs lab technologies technology systems solutions "
        "software dynamics group holdings industries partners capital ventures bank "
        "university college institute hospital clinic foundation studios studio media "
        "consulting analytics networks robotics therapeutics pharmaceuticals",
        " ",
    )
)

# Capitalised words that are not names: sentence openers, calendar words, greetings,
# acronyms of business life, languages and nationalities.
_NOT_NAMES: Final[str] = (
    "i i'm i've i'd i'll im ive id the a an this that these those my our your their his her "
    "its we you he she they it me us them who what when where why how which whose if then "
    "so but and or nor yet also just still even only really honestly actually basically "
    "anyway anyways well ok okay yes no yeah yep nope sure please thanks thank hey hi hello "
    "dear cheers sorry btw fyi tl;dr tldr til imo imho afaik asap eod eta fwiw lol wip todo "
    "note notes reminder update quick context decision edit ps nb re "
    "today tomorrow yesterday tonight morning afternoon evening weekend week month year "
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur "
    "thurs fri sat sun january february march april may june july august september "
    "october november december jan feb mar apr jun jul aug sep sept oct nov dec "
    "q1 q2 q3 q4 h1 h2 spring summer autumn fall winter christmas easter "
    "api apis ui ux cli sdk db dbs vm vms os pr prs mr qa hr it pm ceo cto cfo coo cpo "
    "vp svp evp dba sre mrr arr kpi roi vat eu us usa uk un ai ml llm llms nlp cv "
    "saas paas iaas b2b b2c csv json yaml xml pdf url urls http https dns ssh tls ssl "
    "ci cd crm erp cms ide orm cpu gpu ram ssd ar vr poc mvp rfc adr sla slo sli etl "
    "english british american spanish french german italian japanese chinese korean "
    "hindi arabic portuguese russian dutch swedish "
    "is are was were be been being do does did done have has had will would shall should "
    "can could may might must let let's lets maybe perhaps probably "
    "every all any some each many much more most few other another such same "
    "new old big small great good bad best better first last next "
    "after before during since until while because although though unless "
    "here there now never always often sometimes usually "
    "in on at to for from with by of about as into onto over under between "
    "mr mrs ms dr prof sir madam team project marketing legal finance sales support "
    "engineering product design ops operations security research "
)

_PLACES: Final[str] = (
    "london paris berlin munich hamburg madrid barcelona lisbon porto rome milan amsterdam "
    "brussels vienna zurich geneva copenhagen stockholm oslo helsinki dublin edinburgh "
    "manchester warsaw krakow prague budapest bucharest athens istanbul ankara izmir "
    "moscow kyiv kiev tbilisi new york nyc boston chicago seattle austin denver "
    "san francisco sf los angeles la miami atlanta toronto vancouver montreal "
    "mexico city bogota lima santiago buenos aires sao paulo rio tokyo kyoto osaka seoul "
    "beijing shanghai shenzhen hong kong taipei singapore bangkok hanoi jakarta manila "
    "kuala lumpur mumbai delhi new delhi bangalore bengaluru hyderabad chennai pune "
    "kolkata dhaka karachi lahore dubai abu dhabi riyadh doha cairo lagos abuja accra "
    "nairobi kampala addis ababa kigali johannesburg cape town durban sydney melbourne "
    "auckland wellington "
    "europe asia africa america americas australia india china japan korea germany "
    "france spain italy portugal brazil mexico canada nigeria kenya ghana egypt turkey "
    "russia ukraine poland sweden norway finland denmark ireland scotland england "
    "netherlands belgium switzerland austria greece israel iran pakistan bangladesh "
    "vietnam thailand indonesia philippines malaysia argentina chile colombia peru "
    "south africa new zealand"
)

_WORK_ROLES: Final[str] = (
    "colleague, coworker, co-worker, teammate, team mate, manager, boss, lead, tech lead, "
    "team lead, engineering manager, product manager, pm, cto, ceo, cfo, coo, cpo, vp, "
    "director, head of engineering, cofounder, co-founder, founder, report, direct report, "
    "intern, mentor, mentee, supervisor, advisor, adviser, client, customer, contractor, "
    "recruiter, accountant, lawyer, designer, developer, engineer, architect, analyst, "
    "qa lead, dba, sre, new hire, hire, junior, senior, peer, co-maintainer, "
    "co-maintainers, maintainer, collaborator, counterpart, stakeholder, assistant, "
    "investor, partner at, tutor, professor, supervisor, student, phd student, "
    "doctor, therapist, coach, trainer"
)

_PERSONAL_ROLES: Final[str] = (
    "wife, husband, partner, girlfriend, boyfriend, fiance, fiancé, fiancee, fiancée, "
    "spouse, son, daughter, kid, child, mom, mum, mother, dad, father, brother, sister, "
    "sibling, brother-in-law, sister-in-law, mother-in-law, father-in-law, cousin, uncle, "
    "aunt, niece, nephew, grandma, grandmother, grandpa, grandfather, grandson, "
    "granddaughter, friend, best friend, buddy, pal, neighbour, neighbor, roommate, "
    "flatmate, housemate, classmate, accountability buddy, godmother, godfather, "
    "stepmother, stepfather, stepson, stepdaughter, ex"
)


def _strip_marks(entries: Iterable[str]) -> tuple[dict[str, bool], list[str]]:
    plain: dict[str, bool] = {}
    for entry in entries:
        plain[entry.lstrip("~")] = entry.startswith("~")
    return plain, list(plain)


def _tool_table() -> tuple[dict[str, str], frozenset[str]]:
    kinds: dict[str, str] = {}
    needs_capital: set[str] = set()
    for kind, names in _TOOL_KINDS.items():
        marks, _ = _strip_marks(_split(names))
        for name, marked in marks.items():
            kinds.setdefault(name, kind)
            if marked:
                needs_capital.add(name)
    return kinds, frozenset(needs_capital)


_TOOL_TABLE = _tool_table()
TOOL_KIND: Final[Mapping[str, str]] = _TOOL_TABLE[0]
_TOOL_CAPITAL = _TOOL_TABLE[1]
_ORG_MARKS, _ = _strip_marks(_split(_ORGANIZATIONS))
_CONCEPT_MARKS, _ = _strip_marks(_split(_CONCEPTS))

ORGANIZATIONS: Final[frozenset[str]] = frozenset(_ORG_MARKS)
CONCEPTS: Final[frozenset[str]] = frozenset(_CONCEPT_MARKS)
NEEDS_CAPITAL: Final[frozenset[str]] = (
    _TOOL_CAPITAL
    | frozenset(name for name, marked in _ORG_MARKS.items() if marked)
    | frozenset(name for name, marked in _CONCEPT_MARKS.items() if marked)
)
PRIMARILY_ORGANIZATIONS: Final[frozenset[str]] = _PRIMARILY_ORGANIZATIONS
GIVEN_NAMES: Final[frozenset[str]] = frozenset(_GIVEN_NAMES.split())
ORG_SUFFIXES: Final[frozenset[str]] = _ORG_SUFFIXES
NOT_NAMES: Final[frozenset[str]] = frozenset(_NOT_NAMES.split())
PLACES: Final[frozenset[str]] = frozenset(_split(_PLACES, " ")) | frozenset(
    name
    for name in (
        "new york",
        "san francisco",
        "los angeles",
        "mexico city",
        "buenos aires",
        "sao paulo",
        "hong kong",
        "kuala lumpur",
        "new delhi",
        "abu dhabi",
        "addis ababa",
        "cape town",
        "south africa",
        "new zealand",
    )
)
WORK_ROLES: Final[frozenset[str]] = frozenset(_split(_WORK_ROLES))
PERSONAL_ROLES: Final[frozenset[str]] = frozenset(_split(_PERSONAL_ROLES))
ROLES: Final[frozenset[str]] = WORK_ROLES | PERSONAL_ROLES


# Known names by their first word, with the most words a name starting so has:
# the recogniser tries only these, longest first.
def _first_words() -> dict[str, int]:
    longest: dict[str, int] = {}
    for name in (*TOOL_KIND, *ORGANIZATIONS, *CONCEPTS):
        words = name.split()
        longest[words[0]] = max(longest.get(words[0], 0), len(words))
    return longest


FIRST_WORDS: Final[Mapping[str, int]] = _first_words()


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def is_given_name(low: str) -> bool:
    """Whether a lower-cased word is a common given name, accents aside ("sofía")."""
    return low in GIVEN_NAMES or (not low.isascii() and _fold(low) in GIVEN_NAMES)


def tool_kind(name: str) -> str | None:
    """The kind of a known tool ("database"), or None."""
    return TOOL_KIND.get(name.casefold())
