cmd_Release/obj.target/tenferro_faer/src/binding.o := g++ -o Release/obj.target/tenferro_faer/src/binding.o ../src/binding.cc '-DNODE_GYP_MODULE_NAME=tenferro_faer' '-DUSING_UV_SHARED=1' '-DUSING_V8_SHARED=1' '-DV8_DEPRECATION_WARNINGS=1' '-D_GLIBCXX_USE_CXX11_ABI=1' '-D_FILE_OFFSET_BITS=64' '-D_LARGEFILE_SOURCE' '-D__STDC_FORMAT_MACROS' '-DOPENSSL_NO_PINSHARED' '-DOPENSSL_THREADS' '-DNAPI_VERSION=8' '-DNAPI_DISABLE_CPP_EXCEPTIONS' '-DNODE_ADDON_API_DISABLE_DEPRECATED' '-DBUILDING_NODE_EXTENSION' -I/usr/include/node -I/usr/src -I/usr/deps/openssl/config -I/usr/deps/openssl/openssl/include -I/usr/deps/uv/include -I/usr/deps/zlib -I/usr/deps/v8/include -I../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api -I../include  -fPIC -pthread -Wall -Wextra -Wno-unused-parameter -Wall -Wextra -fno-math-errno -fno-trapping-math -fno-semantic-interposition -m64 -fno-rtti -fno-exceptions -std=c++17 -fno-exceptions -fno-rtti -Wall -Wextra -Wno-unused-function -fno-math-errno -fno-trapping-math -MMD -MF ./Release/.deps/Release/obj.target/tenferro_faer/src/binding.o.d.raw   -c
Release/obj.target/tenferro_faer/src/binding.o: ../src/binding.cc \
 ../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi.h \
 /usr/include/node/node_api.h /usr/include/node/js_native_api.h \
 /usr/include/node/js_native_api_types.h \
 /usr/include/node/node_api_types.h \
 ../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi-inl.h \
 ../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi.h \
 ../include/faer_gemm.h
../src/binding.cc:
../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi.h:
/usr/include/node/node_api.h:
/usr/include/node/js_native_api.h:
/usr/include/node/js_native_api_types.h:
/usr/include/node/node_api_types.h:
../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi-inl.h:
../../../../node_modules/.pnpm/node-addon-api@8.9.2/node_modules/node-addon-api/napi.h:
../include/faer_gemm.h:
