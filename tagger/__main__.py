from tagger.cli.main import main

main()
